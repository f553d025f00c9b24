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
///   own, read on a background thread when inotify reports a write to the database or its WAL. The version it starts from is read before `init` returns: every
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
        /// The inotify watch of the file's folder; nil where inotify is not available.
        let files: DirectoryWatcher?

        init(
            connection: Connection,
            continuation: AsyncThrowingStream<Int64, any Error>.Continuation,
            files: DirectoryWatcher?
        ) {
            self.connection = connection
            self.continuation = continuation
            self.files = files
        }

        /// Waits up to `milliseconds` for a write to the database or its WAL; true when one came.
        func waitForWrite(milliseconds: Int32) -> Bool {
            guard let files else { return pause(milliseconds: milliseconds) }
            var descriptor = pollfd(fd: files.descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, milliseconds) > 0 else { return false }
            return files.drain()
        }

        /// Sleeps `milliseconds`; false (no write seen).
        func pause(milliseconds: Int32) -> Bool {
            usleep(UInt32(milliseconds) * 1_000)
            return false
        }
    }

    /// Watches the store at `path`: its data version is read as soon as the database or its WAL is
    /// written (inotify on its folder), and at least every `interval` seconds (a write inotify cannot see,
    /// on a network file system). Without inotify it is read every millisecond.
    public init(path: String, interval: Double = 0.1) throws(LiveError) {
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
        let url = URL(fileURLWithPath: path)
        let name = url.lastPathComponent
        // Watched before the thread starts: a commit from now on wakes it (the version read above is the start).
        let files = try? DirectoryWatcher(
            directory: url.deletingLastPathComponent().path,
            names: [name, name + "-wal"]
        )
        let state = State(connection: connection, continuation: continuation, files: files)
        let wait = Int32(max(1, min(60_000, (files == nil ? 0.001 : interval) * 1_000)))
        let thread = Thread { [weak self] in
            var last = start
            var failures = 0
            while let watcher = self, !watcher.stopped.load(ordering: .acquiring) {
                let written = failures == 0 ? state.waitForWrite(milliseconds: wait) : state.pause(milliseconds: 10)
                guard let version = state.connection.visibleDataVersion(after: last, waitForCommit: written) else {
                    failures += 1
                    if failures >= 3 {
                        // The stream ends naming what failed: SQLite's own error, read once more.
                        var reason = "PRAGMA data_version failed three times"
                        do { _ = try state.connection.dataVersion() } catch { reason = "\(error)" }
                        state.continuation.finish(throwing: LiveError.file("\(path): \(reason)"))
                        return
                    }
                    continue
                }
                failures = 0
                if version != last {
                    last = version
                    state.continuation.yield(version)
                }
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
