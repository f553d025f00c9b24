import CoexistPublish
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The pull consumer against a real nats-server: what the stream stores after it is made comes one message at
/// a time, in order, with headers, as soon as it is stored (a batch is never waited for), across the end of
/// each request's batch and after a request expired; releasing it deletes the consumer.
@Suite struct PullSubscriptionTests {
    /// A server with the stream `COEXIST` taking `coexist.>`, and a client connected to it.
    private static func stream() throws -> (NatsServer, JetStream) {
        let server = try NatsServer()
        let js = try JetStream(servers: [server.url], name: "coexist-test")
        try js.ensureStream("COEXIST", subject: "coexist.>")
        return (server, js)
    }

    private func publish(_ js: JetStream, _ tokens: ClosedRange<Int>) throws {
        for token in tokens {
            _ = try js.publish(
                subject: "coexist.demo.Task.insert",
                data: [UInt8(token)],
                messageID: "m\(token)",
                headers: [("Coexist-Token", "\(token)")]
            )
        }
    }

    private static func seconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    @Test func messagesComeOneAtATimeInOrderAcrossBatches() throws {
        let (server, js) = try Self.stream()
        defer { server.stop() }
        _ = try js.publish(subject: "coexist.demo.Task.insert", data: [0], messageID: "before")
        let consumer = try js.pullSubscribe(stream: "COEXIST", subject: "coexist.>", durable: "reader", batch: 3)
        // One message of a batch of three, stored while the consumer waits: it comes at once, not when the
        // batch is full or the wait is over.
        let url = server.url
        Thread.detachNewThread {
            usleep(300_000)
            if let other = try? JetStream(servers: [url], name: "coexist-test-writer") {
                _ = try? other.publish(
                    subject: "coexist.demo.Task.insert",
                    data: [1],
                    messageID: "m1",
                    headers: [("Coexist-Token", "1")]
                )
            }
        }
        let start = Self.seconds()
        let first = try consumer.next(timeout: 20_000, headers: ["Coexist-Token"])
        #expect(first?.headers["Coexist-Token"] == "1")
        #expect(first?.data == [1])
        #expect(Self.seconds() - start < 10, "waited for the batch")
        try publish(js, 2...8)
        var tokens: [String] = []
        while tokens.count < 7, let message = try consumer.next(timeout: 5_000, headers: ["Coexist-Token"]) {
            tokens.append(message.headers["Coexist-Token"] ?? "?")
        }
        #expect(tokens == (2...8).map { "\($0)" })
        #expect(try consumer.next(timeout: 200) == nil)
    }

    /// A request that expired (the server says `408`) is renewed within the wait, and a late word about an
    /// earlier request renews nothing: one request waits at a time, also after a pause longer than the
    /// expiry.
    @Test func anExpiredRequestIsRenewedAndRequestsDoNotPileUp() throws {
        let (server, js) = try Self.stream()
        defer { server.stop() }
        let consumer = try js.pullSubscribe(
            stream: "COEXIST",
            subject: "coexist.>",
            durable: "reader",
            batch: 10,
            expiry: 1_000
        )
        // The first request expires after 1 s; the one sent then waits until about 2 s.
        #expect(try consumer.next(timeout: 1_500) == nil)
        #expect(try js.waitingRequests(stream: "COEXIST", consumer: "reader") == 1)
        try publish(js, 1...1)
        #expect(try consumer.next(timeout: 5_000, headers: ["Coexist-Token"])?.headers["Coexist-Token"] == "1")
        // Not read for longer than the expiry and its second of grace: the next call sends one request, and
        // the earlier requests' ends renew nothing.
        usleep(2_500_000)
        #expect(try consumer.next(timeout: 500) == nil)
        #expect(try js.waitingRequests(stream: "COEXIST", consumer: "reader") == 1)
    }

    /// Releasing the subscription deletes the consumer it made: one made again under the same name starts
    /// from the messages stored after it, not where the first one was. A consumer it found is kept.
    @Test func releasingDeletesTheConsumerItMade() throws {
        let (server, js) = try Self.stream()
        defer { server.stop() }
        var consumer: PullSubscription? = try js.pullSubscribe(stream: "COEXIST", subject: "coexist.>", durable: "r")
        var found: PullSubscription? = try js.pullSubscribe(stream: "COEXIST", subject: "coexist.>", durable: "r")
        _ = found
        found = nil
        #expect(try js.waitingRequests(stream: "COEXIST", consumer: "r") != nil, "the found one deleted it")
        _ = consumer
        consumer = nil
        #expect(try js.waitingRequests(stream: "COEXIST", consumer: "r") == nil)
        try publish(js, 1...1)
        let again = try js.pullSubscribe(stream: "COEXIST", subject: "coexist.>", durable: "r")
        try publish(js, 2...2)
        #expect(try again.next(timeout: 5_000)?.data == [2])
    }

    /// The server restarts: the request waiting there is gone with it (nothing says so). While the server is
    /// away the consumer answers nil; once the client reconnected, it asks again at once, not at the
    /// request's expiry.
    @Test func aRequestLostWithTheServerIsSentAgain() throws {
        let (server, js) = try Self.stream()
        defer { server.stop() }
        let consumer = try js.pullSubscribe(
            stream: "COEXIST",
            subject: "coexist.>",
            durable: "reader",
            expiry: 60_000
        )
        #expect(try consumer.next(timeout: 200) == nil)
        server.stop()
        #expect(try consumer.next(timeout: 600) == nil)
        try server.restart()
        var published = false
        for _ in 0..<100 where !published {
            published = (try? publish(js, 1...1)) != nil
            if !published { usleep(100_000) }
        }
        #expect(published)
        #expect(try consumer.next(timeout: 10_000, headers: ["Coexist-Token"])?.headers["Coexist-Token"] == "1")
    }
}
