import Foundation
import TestSupport
import Testing

/// One commit watcher feeds both services: the daemon holds a single inotify instance, and an app's commit
/// reaches subscribers and is mirrored (the mirror's event follows) with the fallback check an hour away.
@Suite struct CommitWatcherTests {
    /// The daemon's descriptors that are inotify instances.
    static func inotifyDescriptors(_ pid: Int32) throws -> Int {
        let directory = "/proc/\(pid)/fd"
        return try FileManager.default.contentsOfDirectory(atPath: directory).filter { name in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: directory + "/" + name)) == "anon_inode:inotify"
        }.count
    }

    @Test func oneWatchPublishesAndMirrorsEveryCommit() throws {
        let fixture = try EventFixture(options: ["--poll-interval", "1h"])
        #expect(try Self.inotifyDescriptors(fixture.daemon.process.processIdentifier) == 1)
        let client = try fixture.client()
        #expect(
            try client.request(#"{"op":"subscribe","since":"now","mirrors":true}"#)["type"] as? String == "subscribed"
        )
        for round in 0..<3 {
            let token = try fixture.legacyInsert("watched \(round)")
            var sawCommit = false
            let messages = try fixture.collect(client, timeout: 10) { message in
                if message["token"] as? Int == Int(token) { sawCommit = true }
                return sawCommit && message["mirror"] as? Bool == true && message["side"] as? String == "new"
            }
            let tokens = messages.compactMap { $0["token"] as? Int }
            #expect(tokens.contains(Int(token)), "round \(round): the app's commit was published: \(messages)")
            #expect(
                messages.last?["mirror"] as? Bool == true && (messages.last?["token"] as? Int ?? 0) > Int(token),
                "round \(round): the commit was mirrored without the fallback check: \(messages)"
            )
        }
        #expect(fixture.daemon.stop() == 0)
    }
}
