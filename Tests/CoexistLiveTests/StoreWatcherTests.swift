import CoexistLive
import Foundation
import TestSupport
import Testing

/// The watcher reports every commit after its creation, also one landing before its thread first runs.
@Suite struct StoreWatcherTests {
    @Test func aCommitRightAfterCreationIsReported() async throws {
        let directory = try TemporaryDirectory()
        let path = try DemoStore.create(in: directory).path
        for round in 0..<20 {
            let watcher = try StoreWatcher(path: path)
            try RawSQLite.execute(path, "UPDATE Z_METADATA SET Z_VERSION = Z_VERSION")
            // A missed commit would wait forever: stopping the watcher ends the stream with nothing.
            let deadline = Task {
                try await Task.sleep(for: .seconds(10))
                watcher.stop()
            }
            var commits = watcher.commits.makeAsyncIterator()
            #expect(try await commits.next() != nil, "round \(round)")
            deadline.cancel()
            watcher.stop()
        }
    }

    /// A commit wakes the watcher through inotify: with its periodic read ten minutes away, each of a few
    /// commits (on the WAL, then one checkpointed into the database) is reported within seconds.
    @Test func aWriteWakesTheWatcher() async throws {
        let directory = try TemporaryDirectory()
        let path = try DemoStore.create(in: directory).path
        let watcher = try StoreWatcher(path: path, interval: 600)
        defer { watcher.stop() }
        let deadline = Task {
            try await Task.sleep(for: .seconds(60))
            watcher.stop()
        }
        defer { deadline.cancel() }
        var commits = watcher.commits.makeAsyncIterator()
        for statement in [
            "UPDATE Z_METADATA SET Z_VERSION = Z_VERSION", "UPDATE Z_METADATA SET Z_VERSION = Z_VERSION",
            "PRAGMA wal_checkpoint(TRUNCATE); UPDATE Z_METADATA SET Z_VERSION = Z_VERSION",
        ] {
            try await Task.sleep(for: .milliseconds(100))  // the watcher waits in poll(2) by now
            let started = Date()
            try RawSQLite.execute(path, statement)
            #expect(try await commits.next() != nil, "\(statement)")
            #expect(Date().timeIntervalSince(started) < 30, "reported by the periodic read, not by the file watch")
        }
    }
}
