import CoexistRuntime
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Keeps systemd's start timeout at bay while one long start-up operation runs (an auto-migration, whose
/// single phase — a `VACUUM INTO` backup, one step's rebuild — may outlast any fixed extension): at once,
/// then every `interval`, it sends `EXTEND_TIMEOUT_USEC` (three intervals) with `STATUS=` naming the
/// operation's phase and how long it has run. It ends with the operation; a process that hangs stops
/// extending only when it dies, which `Restart=` then handles.
final class StartupHeartbeat: Sendable {
    /// What the beating thread shares with the operation's.
    private final class State: Sendable {
        let notifier: ServiceNotifier
        let milliseconds: Int32
        let started = Monotonic.now()
        let phase: PthreadLocked<String>
        let stopped = Atomic<Bool>(false)

        init(notifier: ServiceNotifier, phase: String, milliseconds: Int32) {
            self.notifier = notifier
            self.phase = PthreadLocked(phase)
            self.milliseconds = milliseconds
        }

        var extensionMicroseconds: Int { Int(milliseconds) * 3_000 }

        func beat() {
            let text = phase.withLock { $0 }
            let seconds = (Monotonic.now() - started) / 1_000_000_000
            notifier.notify("STATUS=\(text) (\(seconds) s)\nEXTEND_TIMEOUT_USEC=\(extensionMicroseconds)")
        }
    }

    private let state: State
    private let wake: WakeSignal?
    private let thread: WorkerThread?

    /// Starts beating for an operation whose first phase is `phase`; nothing when no service manager
    /// listens. Without a thread (none could be made) the first beat and each phase still extend.
    init(notifier: ServiceNotifier, phase: String, interval milliseconds: Int32 = 10_000) {
        let state = State(notifier: notifier, phase: phase, milliseconds: max(1, milliseconds))
        self.state = state
        guard notifier.isEnabled, let wake = try? WakeSignal() else {
            wake = nil
            thread = nil
            return
        }
        self.wake = wake
        state.beat()
        thread = try? WorkerThread(name: "coexist-heartbeat") {
            while !state.stopped.load(ordering: .acquiring) {
                var descriptor = pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0)
                if poll(&descriptor, 1, state.milliseconds) > 0 {
                    wake.drain()
                    continue
                }
                state.beat()
            }
        }
    }

    /// The operation's current phase: told to systemd at once, and at every beat after.
    func enter(_ text: String) {
        state.phase.withLock { $0 = text }
        guard state.notifier.isEnabled else { return }
        state.notifier.notify("STATUS=\(text)\nEXTEND_TIMEOUT_USEC=\(state.extensionMicroseconds)")
    }

    /// Ends the beats and waits for the beating thread.
    func stop() {
        state.stopped.store(true, ordering: .releasing)
        wake?.signal()
        thread?.join()
    }
}
