import CoexistSQLite
import Foundation
import Synchronization

/// Watches a store file for commits by any process (SQLite's `PRAGMA data_version` on a read-only
/// connection of its own, read on a background thread) and reports each as an element of ``commits``.
///
/// Pair it with a context to follow the file without coexistd:
///
/// ```swift
/// let watcher = try StoreWatcher(path: context.path)
/// for try await _ in watcher.commits {
///     for change in try context.mergeChangesFromStore() { print("token", change.token, change.updated) }
/// }
/// ```
///
/// The version it starts from is read before `init` returns: every commit after that is reported.
/// Several commits landing between two reads are reported once: merging reads all of them from the
/// history. The watcher stops when ``stop()`` is called, when the stream's consumer goes away, or when it is
/// released; when the file cannot be read any more (three reads in a row fail), the stream ends by throwing
/// ``CoreDataError/store(_:)`` with SQLite's error.
public final class StoreWatcher: Sendable {
    /// One element per observed commit batch: the data version seen.
    public let commits: AsyncThrowingStream<Int64, any Error>
    private let stopped: Atomic<Bool>

    private final class State: @unchecked Sendable {
        let connection: Connection
        let continuation: AsyncThrowingStream<Int64, any Error>.Continuation
        init(connection: Connection, continuation: AsyncThrowingStream<Int64, any Error>.Continuation) {
            self.connection = connection
            self.continuation = continuation
        }
    }

    /// Watches the store at `path`, reading its data version every `interval` seconds (1 ms by default:
    /// one cheap read of the connection's state).
    public init(path: String, interval: Double = 0.001) throws(CoreDataError) {
        let connection: Connection
        let start: Int64
        do {
            connection = try Connection(path: path, options: .readOnly)
            start = try connection.dataVersion()
        } catch {
            throw .store("\(error)")
        }
        let (stream, continuation) = AsyncThrowingStream<Int64, any Error>.makeStream(
            bufferingPolicy: .bufferingNewest(1)
        )
        commits = stream
        stopped = Atomic(false)
        let state = State(connection: connection, continuation: continuation)
        let pause = UInt32(max(100, min(1_000_000, interval * 1_000_000)))
        let thread = Thread { [weak self] in
            var last = start
            var failures = 0
            while let watcher = self, !watcher.stopped.load(ordering: .acquiring) {
                do {
                    let version = try state.connection.dataVersion()
                    failures = 0
                    if version != last {
                        last = version
                        state.continuation.yield(version)
                    }
                } catch {
                    failures += 1
                    if failures >= 3 {
                        state.continuation.finish(throwing: CoreDataError.store("\(error)"))
                        return
                    }
                }
                usleep(failures > 0 ? 10_000 : pause)
            }
            state.continuation.finish()
        }
        thread.name = "coexist-store-watcher"
        continuation.onTermination = { [weak self] _ in self?.stop() }
        thread.start()
    }

    /// Stops watching; the stream ends.
    public func stop() { stopped.store(true, ordering: .releasing) }

    deinit { stopped.store(true, ordering: .releasing) }
}
