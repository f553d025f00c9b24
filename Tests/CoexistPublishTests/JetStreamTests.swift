import CoexistPublish
import TestSupport
import Testing

/// The JetStream client against a real nats-server: streams created and checked, publishes acknowledged in
/// order, a re-sent message id dropped by the server's duplicate window, messages read back with headers.
@Suite struct JetStreamTests {
    @Test func publishesAreAckedInOrderAndDuplicatesDropped() throws {
        let server = try NatsServer()
        defer { server.stop() }
        let js = try JetStream(servers: [server.url], name: "coexist-test")
        #expect(try js.ensureStream("COEXIST", subject: "coexist.>"))
        #expect(try js.ensureStream("COEXIST", subject: "coexist.>") == false, "the second call finds it")
        let first = try js.publish(
            subject: "coexist.demo.Task.insert",
            data: Array(#"{"token":1}"#.utf8),
            messageID: "store-1-0",
            headers: [("Coexist-Token", "1")]
        )
        #expect(first == JetStream.Ack(sequence: 1, duplicate: false))
        // A re-publish after a crash: same id, the server keeps one copy.
        let again = try js.publish(subject: "coexist.demo.Task.insert", data: [1], messageID: "store-1-0")
        #expect(again == JetStream.Ack(sequence: 1, duplicate: true))
        let second = try js.publish(subject: "coexist.demo.Task.update", data: [2], messageID: "store-2-0")
        #expect(second == JetStream.Ack(sequence: 2, duplicate: false))
        #expect(try js.state(of: "COEXIST") == (messages: 2, lastSequence: 2))
        let stored = try js.message("COEXIST", sequence: 1, headers: ["Coexist-Token", "Nats-Msg-Id"])
        #expect(stored.subject == "coexist.demo.Task.insert")
        #expect(stored.data == Array(#"{"token":1}"#.utf8))
        #expect(stored.headers["Coexist-Token"] == "1")
        #expect(stored.headers["Nats-Msg-Id"] == "store-1-0")
    }

    /// A stream of that name taking other subjects is refused, and left as it is.
    @Test func aStreamWithOtherSubjectsIsRefused() throws {
        let server = try NatsServer()
        defer { server.stop() }
        let js = try JetStream(servers: [server.url], name: "coexist-test")
        try js.ensureStream("COEXIST", subject: "other.>")
        #expect(throws: PublishError.self) { try js.ensureStream("COEXIST", subject: "coexist.>") }
        _ = try js.publish(subject: "other.x", data: [1], messageID: "a")
        #expect(try js.state(of: "COEXIST").messages == 1)
    }

    /// Nobody listening: connecting fails within its timeout, as unavailable.
    @Test func anUnreachableServerIsUnavailable() throws {
        let server = try NatsServer()
        let url = server.url
        server.stop()
        do {
            _ = try JetStream(servers: [url], name: "coexist-test", timeout: 500)
            Issue.record("connected to a stopped server")
        } catch {
            #expect(error.unavailable, "\(error)")
        }
    }
}
