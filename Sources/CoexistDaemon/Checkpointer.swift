import CoexistRuntime
import CoexistSQLite

#if canImport(Glibc)
import Glibc
#endif

/// The bridge's WAL checkpoints, on a thread and a connection of their own, so that a checkpoint's copy
/// and its `fsync`s never hold a mirror back (a restarting one still holds the write lock while it waits
/// for the WAL's readers, at most 5 ms).
///
/// The bridge thread asks for one (``request(restart:)``), is woken when it is done, and reads how it
/// went (``takeOutcome()``); one runs at a time.
final class Checkpointer: @unchecked Sendable {
    /// How a checkpoint went.
    enum Outcome {
        /// Done; with `restart`, the next commit starts the WAL over. `whole`: the passive checkpoint copied
        /// every frame (no reader held any back).
        case done(whole: Bool)
        /// Held off: another connection's checkpoint ran throughout, or (restarting) the WAL's readers
        /// stayed.
        case heldOff
        /// SQLite failed (the connection stays open for the next request).
        case failed(any Error)
    }

    private struct State {
        /// A checkpoint asked for and not started; whether it restarts.
        var requested: Bool?
        var running = false
        var outcome: Outcome?
        var stop = false
    }

    /// A pthread mutex: the two threads take it at once often enough for a futex's kernel path, which
    /// ThreadSanitizer cannot follow.
    private let state = PthreadLocked(State())
    private let wake: WakeSignal
    /// Signalled when a checkpoint is done (the bridge thread's wake-up).
    private let finished: WakeSignal
    private let connection: Connection
    private var thread: WorkerThread?

    /// Opens the checkpoints' connection to `database` and starts the thread, which signals `finished`
    /// after each checkpoint.
    init(database: String, options: OpenOptions, finished: WakeSignal) throws {
        wake = try WakeSignal()
        self.finished = finished
        connection = try Connection(path: database, options: options)
        connection.manageCheckpoints()
        thread = try WorkerThread(name: "coexist-ckpt") { [self] in run() }
    }

    /// Asks for a checkpoint (that readies the WAL to start over, with `restart`); false when one is
    /// already asked for or running.
    func request(restart: Bool) -> Bool {
        let accepted = state.withLock { state in
            guard state.requested == nil && !state.running else { return false }
            state.requested = restart
            return true
        }
        if accepted { wake.signal() }
        return accepted
    }

    /// How the last checkpoint went, once; nil while none finished since the last call.
    func takeOutcome() -> Outcome? {
        state.withLock { state in
            defer { state.outcome = nil }
            return state.outcome
        }
    }

    /// Stops the thread after the checkpoint it is running, and waits for it.
    func stop() {
        state.withLock { $0.stop = true }
        wake.signal()
        thread?.join()
        thread = nil
    }

    /// A passive checkpoint, tried again (up to 4 times, 200 µs apart) while another connection's
    /// checkpoint runs: the copy and its `fsync`s are done here, not under the write lock a restarting
    /// checkpoint takes next, which then mostly waits for readers (and for another connection's checkpoint
    /// itself).
    private func checkpoint(restart: Bool) throws -> Outcome {
        var attempts = 1
        var passive = try connection.checkpoint()
        while passive.frames < 0, attempts < 4 {
            usleep(200)
            passive = try connection.checkpoint()
            attempts += 1
        }
        let whole = passive.frames >= 0 && passive.checkpointed == passive.frames
        guard restart else { return passive.frames >= 0 ? .done(whole: whole) : .heldOff }
        return try connection.restartingCheckpoint(waitingAtMost: 5) ? .done(whole: whole) : .heldOff
    }

    private func run() {
        while true {
            var descriptor = pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, -1)
            _ = wake.drain()
            let (stop, restart) = state.withLock { state in
                defer { state.requested = nil }
                if state.requested != nil { state.running = true }
                return (state.stop, state.requested)
            }
            if stop { return }
            guard let restart else { continue }
            let outcome: Outcome
            do {
                outcome = try checkpoint(restart: restart)
            } catch {
                outcome = .failed(error)
            }
            state.withLock { state in
                state.running = false
                state.outcome = outcome
            }
            finished.signal()
        }
    }
}
