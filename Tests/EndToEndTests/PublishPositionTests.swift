import CoexistHistory
import CoexistLegacyStore
import CoexistPublish
import CoexistRuntime
import CoexistStore
import Foundation
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Where the publisher stands against what the stream holds, and what the stream takes: a position never
/// claims a transaction the stream holds only part of, catches up with what the stream holds whole, and a
/// message the stream cannot take goes as a notice instead of holding every later change back.
@Suite struct PublishPositionTests {
    typealias Fixture = PublishTests.Fixture

    /// A publisher without a position whose stream ends inside a transaction (a stop with its last messages
    /// in flight, then the consumer row dropped) starts from the token before it, not from it: the rest of
    /// that transaction is not in the stream yet, and a position claiming it would make a later restart skip
    /// it. The rest is then published.
    @Test func aStreamEndingInsideATransactionIsNotAPosition() throws {
        let fixture = try Fixture()
        defer { fixture.server?.stop() }
        let token = try fixture.legacySave(3)
        let store = try StoreMetadata.read(fixture.shared.legacy.connection).storeUUID
        let stream = try JetStream(servers: [fixture.url], name: "test-writer")
        try stream.ensureStream("STREAM", subject: "coexist.*.*.*")
        for index in 0..<2 {
            _ = try stream.publish(
                subject: "coexist.\(store).Task.insert",
                data: Array("{}".utf8),
                messageID: "\(store):\(token):\(index)"
            )
        }
        let daemon = try fixture.daemon()
        defer { _ = daemon.stop() }
        try daemon.waitUntilServing(timeout: 300)
        #expect(try fixture.waitForMessages(3, stream) == 3)
        #expect(try fixture.waitForNoLag(daemon) == 0)
        #expect(daemon.log.contains("publishing to stream STREAM from token \(token - 1) on"), "\(daemon.log)")
        #expect(try fixture.messages(stream).map(\.id) == (0..<3).map { "\(store):\(token):\($0)" })
        let consumers = try ProductProcess.run("coexistctl", ["consumers", "list", fixture.shared.legacy.path])
        #expect(consumers.stdout.contains("coexist:publish:STREAM"), "\(consumers.stdout)")
    }

    /// A position behind what the stream holds whole (a stop before the last post; here, moved back by an
    /// operator) moves to it at the start, on an idle store too: the lag is 0 without waiting for a commit.
    @Test func aPositionBehindTheStreamCatchesUpAtStart() throws {
        // The mirrors published too: the file's last transaction is then in the stream (else the history read
        // for the mirrors after it moves the position).
        let fixture = try Fixture(publish: "framing = transaction\nmirrors = true")
        defer { fixture.server?.stop() }
        let first = try fixture.daemon()
        try first.waitUntilServing(timeout: 300)
        let tokens = [try fixture.legacySave(), try fixture.legacySave()]
        let stream = try JetStream(servers: [fixture.url], name: "test-reader")
        #expect(try fixture.waitForMessages(3, stream) >= 3, "two saves and at least one mirror")
        #expect(try fixture.waitForNoLag(first) == 0)
        #expect(first.stop() == 0)
        let published = try stream.state(of: "STREAM").messages
        let reset = try ProductProcess.run(
            "coexistctl",
            ["consumers", "reset", fixture.shared.legacy.path, "coexist:publish:STREAM", "--to", "\(tokens[0])"]
        )
        #expect(reset.status == 0, "\(reset.stderr)")
        let second = try fixture.daemon()
        defer { _ = second.stop() }
        try second.waitUntilServing(timeout: 300)
        let deadline = Date().addingTimeInterval(20)
        var lag = try fixture.publishLag(second)
        while lag != 0 && Date() < deadline {
            usleep(50_000)
            lag = try fixture.publishLag(second)
        }
        #expect(lag == 0, "\(second.log)")
        #expect(try stream.state(of: "STREAM").messages == published, "nothing published twice")
    }

    /// A stream that takes smaller messages than the server (an operator's `max_msg_size`): a change whose
    /// message is bigger goes out as an "oversize" notice, and the changes after it follow (the stream refused
    /// the message on every try, holding everything after it back).
    @Test func aStreamsOwnMessageLimitIsHonoured() throws {
        let fixture = try Fixture(publish: "values = true")
        defer { fixture.server?.stop() }
        let stream = try JetStream(servers: [fixture.url], name: "test-admin")
        try stream.ensureStream("STREAM", subject: "coexist.*.*.*", maximumMessageSize: 8_192)
        #expect(try stream.maximumMessageSize(of: "STREAM") == 8_192)
        let daemon = try fixture.daemon()
        defer { _ = daemon.stop() }
        try daemon.waitUntilServing(timeout: 300)
        let big = try fixture.shared.legacy.save(SaveMetadata(author: "old-app")) { save in
            var values = DemoStore.mandatoryValues(for: "Task", in: fixture.shared.legacy)
            values["id"] = .uuid(withUnsafeBytes(of: UUID().uuid) { Array($0) })
            values["title"] = .string(String(repeating: "long ", count: 2_000))
            _ = try save.insert("Task", values)
        }
        let small = try fixture.legacySave()
        #expect(try fixture.waitForMessages(2, stream) == 2, "\(daemon.log)")
        #expect(try fixture.waitForNoLag(daemon) == 0)
        let messages = try fixture.messages(stream)
        #expect(messages.map(\.token) == [try #require(big.token), small])
        #expect(messages.first?.json["type"] as? String == "oversize", "\(messages.first?.json ?? [:])")
        #expect(messages.last?.json["type"] as? String != "oversize")
    }
}
