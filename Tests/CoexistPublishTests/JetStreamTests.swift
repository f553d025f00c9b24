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

    /// A pipelined window: acknowledged in order; a message the server does not store makes every later one
    /// of the window refused (each expects its predecessor as the stream's last), so the stream never holds a
    /// message whose predecessor is missing; another publisher's message in between is the same refusal.
    @Test func aWindowNeverLeavesAGap() throws {
        let server = try NatsServer()
        defer { server.stop() }
        let js = try JetStream(servers: [server.url], name: "coexist-test")
        try js.ensureStream("COEXIST", subject: "coexist.>")
        func outgoing(_ subject: String, _ id: String) -> JetStream.Outgoing {
            JetStream.Outgoing(subject: subject, data: Array(id.utf8), messageID: id, headers: [("Coexist-Token", id)])
        }
        let first = try js.publish(window: (1...5).map { outgoing("coexist.a", "m\($0)") }, stream: "COEXIST")
        #expect(first == (1...5).map { .acknowledged(JetStream.Ack(sequence: UInt64($0), duplicate: false)) })
        // The first message goes nowhere (no stream takes its subject): the next ones are refused.
        let broken = try js.publish(
            window: [outgoing("elsewhere.a", "x1"), outgoing("coexist.a", "x2")],
            stream: "COEXIST"
        )
        #expect(broken.first == .refused(code: 503, description: "no stream takes the subject"), "\(broken)")
        guard case .refused(let code, _)? = broken.last else {
            Issue.record("the second message was stored after a missing one: \(broken)")
            return
        }
        #expect(code == JetStream.wrongLastMessageID)
        #expect(try js.state(of: "COEXIST").messages == 5)
        // A message whose predecessor is not the stream's last (here: the predecessor was a copy the server
        // dropped, m1) is refused the same way; sent again as a new window, it is stored.
        let other = try JetStream(servers: [server.url], name: "other")
        _ = try other.publish(subject: "coexist.b", data: [1], messageID: "other-1")
        let copy = try js.publish(
            window: [outgoing("coexist.a", "m1"), outgoing("coexist.a", "m6")],
            stream: "COEXIST"
        )
        #expect(copy.first == .acknowledged(JetStream.Ack(sequence: 1, duplicate: true)), "\(copy)")
        guard case .refused(let refusal, _)? = copy.last else {
            Issue.record("m6 was stored after a message that is not the stream's last: \(copy)")
            return
        }
        #expect(refusal == JetStream.wrongLastMessageID)
        let again = try js.publish(window: [outgoing("coexist.a", "m6")], stream: "COEXIST")
        #expect(again == [.acknowledged(JetStream.Ack(sequence: 7, duplicate: false))])
    }

    /// A pipeline keeps messages in flight across calls: those sent while others are unanswered are
    /// acknowledged in the order they were sent; after a refusal, what was in flight is abandoned (its late
    /// replies passed over) and sent again, the first of it expecting nothing.
    @Test func aPipelineAcknowledgesInOrderAcrossCallsAndPassesOverWhatItAbandoned() throws {
        let server = try NatsServer()
        defer { server.stop() }
        let js = try JetStream(servers: [server.url], name: "coexist-test")
        try js.ensureStream("COEXIST", subject: "coexist.>")
        func outgoing(_ subject: String, _ id: String) -> JetStream.Outgoing {
            JetStream.Outgoing(subject: subject, data: Array(id.utf8), messageID: id, headers: [])
        }
        let pipeline = try PublishPipeline(js, stream: "COEXIST")
        var outcomes: [JetStream.Outcome] = []
        for number in 1...3 { #expect(try pipeline.send(outgoing("coexist.a", "m\(number)"))) }
        outcomes += try pipeline.collect(timeout: js.timeout)
        #expect(!outcomes.isEmpty)
        // Sent while earlier ones may still be in flight: each expects the one before it.
        for number in 4...6 { #expect(try pipeline.send(outgoing("coexist.a", "m\(number)"))) }
        while pipeline.inFlight > 0 {
            let answered = try pipeline.collect(timeout: js.timeout)
            #expect(!answered.isEmpty, "an acknowledgement went missing")
            if answered.isEmpty { break }
            outcomes += answered
        }
        #expect(outcomes == (1...6).map { .acknowledged(JetStream.Ack(sequence: UInt64($0), duplicate: false)) })

        // Nothing takes the first one's subject: the two after it are refused (they expect it), not stored.
        #expect(try pipeline.send(outgoing("elsewhere.a", "x1")))
        #expect(try pipeline.send(outgoing("coexist.a", "x2")))
        #expect(try pipeline.send(outgoing("coexist.a", "x3")))
        let refused = try pipeline.collect(timeout: js.timeout)
        #expect(refused.first == .refused(code: 503, description: "no stream takes the subject"), "\(refused)")
        pipeline.abandon()
        #expect(pipeline.inFlight == 0)
        // Sent again with nothing in flight: stored; the refusals of x2 and x3 that come late are not its.
        #expect(try pipeline.send(outgoing("coexist.a", "x2")))
        #expect(
            try pipeline.collect(timeout: js.timeout) == [.acknowledged(JetStream.Ack(sequence: 7, duplicate: false))]
        )
        #expect(try pipeline.send(outgoing("coexist.a", "x3")))
        #expect(
            try pipeline.collect(timeout: js.timeout) == [.acknowledged(JetStream.Ack(sequence: 8, duplicate: false))]
        )
        // Abandoned before its reply was read: that reply, when it comes, is not the next message's.
        #expect(try pipeline.send(outgoing("coexist.a", "y1")))
        pipeline.abandon()
        #expect(try pipeline.send(outgoing("coexist.a", "y2")))
        #expect(
            try pipeline.collect(timeout: js.timeout) == [.acknowledged(JetStream.Ack(sequence: 10, duplicate: false))]
        )
        #expect(try js.state(of: "COEXIST").messages == 10)
    }
}
