import CoexistRuntime
import CoexistSQLite
import Foundation
import Synchronization

/// Reports every commit to a store file, from the file itself or from coexistd; each is an element of
/// ``commits``. A context's `remoteChanges(from:)` uses one to merge what other processes commit; it can
/// also be used alone:
///
/// ```swift
/// let watcher = try StoreWatcher(path: context.path)
/// for try await _ in watcher.commits {
///     for change in try context.mergeChangesFromStore() { print("token", change.token, change.updated) }
/// }
/// ```
///
/// - The file (``init(path:interval:)``): SQLite's `PRAGMA data_version` on a read-only connection of its
///   own, read on a background thread. The version it starts from is read before `init` returns: every
///   commit after that is reported; several commits between two reads are reported once (merging reads
///   all of them from the history). When the file cannot be read any more (three reads in a row fail),
///   the stream ends by throwing ``LiveError/file(_:)``.
/// - coexistd (``init(coexistdSocket:sides:)``): a subscription to its event socket, mirrors included;
///   each transaction it publishes is reported once, with its token, as soon as coexistd sees it. When
///   coexistd stops or drops the subscription, the stream ends by throwing ``LiveError/ended(socket:reason:)``.
///
/// The watcher stops when ``stop()`` is called, when the stream's consumer goes away, or when it is
/// released.
public final class StoreWatcher: Sendable {
    /// One element per observed commit (batch): the file's data version, or the token coexistd published.
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
    public init(path: String, interval: Double = 0.001) throws(LiveError) {
        let connection: Connection
        let start: Int64
        do {
            connection = try Connection(path: path, options: .readOnly)
            start = try connection.dataVersion()
        } catch {
            throw .file("\(error)")
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
                        state.continuation.finish(throwing: LiveError.file("\(error)"))
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

    /// Watches through coexistd's socket at `socket`: a subscription from now on, mirrors included, to the
    /// transactions of `sides` (`legacy`, `new`; nil: both). Fails when coexistd does not answer the
    /// subscription within 5 seconds.
    public init(coexistdSocket socket: String, sides: Set<String>? = nil) throws(LiveError) {
        let subscription = try DaemonSubscription(socket: socket, sides: sides)
        let (stream, continuation) = AsyncThrowingStream<Int64, any Error>.makeStream(
            bufferingPolicy: .bufferingNewest(1)
        )
        commits = stream
        stopped = Atomic(false)
        let thread = Thread { [weak self] in
            let isStopped = { self?.stopped.load(ordering: .acquiring) ?? true }
            do {
                while let token = try subscription.nextTransaction(isStopped: isStopped) {
                    continuation.yield(token)
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        thread.name = "coexist-store-watcher"
        continuation.onTermination = { [weak self] _ in self?.stop() }
        thread.start()
    }

    /// Stops watching; the stream ends.
    public func stop() { stopped.store(true, ordering: .releasing) }

    deinit { stopped.store(true, ordering: .releasing) }
}
