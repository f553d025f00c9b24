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
}
