import Foundation
import TestSupport
import Testing

/// coexistd waits on its clients through one epoll set and groups its live subscribers by filter set: many
/// clients ready at once (more than one batch of readiness) are all answered; idle subscribers beside a live
/// one change nothing it receives, get their heartbeats, and resume after what their filters left out.
@Suite struct EventReadinessTests {
    /// A subscriber to Category changes only (which these tests never write), past its empty backlog.
    private static func categorySubscriber(_ fixture: EventFixture) throws -> SocketClient {
        let client = try fixture.client()
        client.send(#"{"op":"subscribe","since":"now","entities":["Category"]}"# + "\n")
        _ = try fixture.collect(client) { $0["type"] as? String == "end_of_backlog" }
        return client
    }

    @Test func manyClientsReadyAtOnceAreAllAnswered() throws {
        let fixture = try EventFixture()
        let clients = try (0..<200).map { _ in try fixture.client() }
        for (index, client) in clients.enumerated() { client.send(#"{"op":"ping","id":\#(index)}"# + "\n") }
        for (index, client) in clients.enumerated() {
            let replies = try fixture.collect(client) { $0["type"] as? String == "pong" }
            #expect(replies.last?["id"] as? Int == index, "client \(index): \(replies)")
        }
    }

    @Test func idleSubscribersBesideALiveOneChangeNothingItReceives() throws {
        let fixture = try EventFixture()
        let idle = try (0..<100).map { _ in try Self.categorySubscriber(fixture) }
        let live = try fixture.client()
        live.send(#"{"op":"subscribe","since":"now","entities":["Task"]}"# + "\n")
        _ = try fixture.collect(live) { $0["type"] as? String == "end_of_backlog" }
        var tokens: [Int64] = []
        for index in 0..<20 { tokens.append(try fixture.legacyInsert("task \(index)")) }
        let events = try fixture.collect(live) { ($0["token"] as? Int).map { Int64($0) >= tokens.last ?? 0 } ?? false }
            .filter { $0["type"] as? String == "event" }
        #expect(events.compactMap { ($0["token"] as? Int).map(Int64.init) } == tokens)
        // The idle ones were told nothing but heartbeats, and are still served.
        for client in idle.prefix(5) {
            let replies = try client.request(#"{"op":"ping"}"#)
            #expect(replies["type"] as? String == "pong", "\(replies)")
        }
    }

    @Test func idleSubscribersGetHeartbeatsAndResumeAfterWhatTheirFiltersLeftOut() throws {
        let fixture = try EventFixture(options: ["--heartbeat-interval", "200ms"])
        let idle = try (0..<20).map { _ in try fixture.client() }
        for client in idle {
            client.send(#"{"op":"subscribe","since":"now","entities":["Category"]}"# + "\n")
            _ = try fixture.collect(client) { $0["type"] as? String == "end_of_backlog" }
        }
        var last: Int64 = 0
        for index in 0..<10 { last = try fixture.legacyInsert("task \(index)") }
        try fixture.waitUntilCaughtUp()
        for client in idle {
            // Heartbeats keep coming, with the last token published (the mirrors of the inserts included).
            let heartbeats = try fixture.collect(client, timeout: 5) { message in
                message["type"] as? String == "heartbeat" && Int64(message["token"] as? Int ?? 0) > last
            }
            #expect(heartbeats.allSatisfy { $0["type"] as? String == "heartbeat" }, "\(heartbeats)")
            let published = try #require(heartbeats.last?["token"] as? Int)
            client.send(#"{"op":"unsubscribe"}"# + "\n")
            let reply = try fixture.collect(client) { $0["type"] as? String == "unsubscribed" }.last
            // Nothing was queued for it: it resumes after everything published, not where it subscribed.
            #expect((reply?["token"] as? Int).map { $0 >= published } == true, "\(String(describing: reply))")
        }
    }

    @Test func aLiveSubscriberTheServerClosesIsClosedWithoutAnotherCommit() throws {
        let fixture = try EventFixture(options: ["--max-line-length", "512"])
        let client = try fixture.client()
        client.send(#"{"op":"subscribe","since":"now","entities":["Task"]}"# + "\n")
        _ = try fixture.collect(client) { $0["type"] as? String == "end_of_backlog" }
        // A commit published: the subscriber is among the live ones the server groups by filter set.
        let token = try fixture.legacyInsert("one")
        _ = try fixture.collect(client) { Int64($0["token"] as? Int ?? 0) == token }
        try fixture.waitUntilCaughtUp()
        client.send(String(repeating: "x", count: 2_000) + "\n")
        let replies = try fixture.collect(client, timeout: 5) { $0["code"] as? String == "line_too_long" }
        #expect(replies.last?["code"] as? String == "line_too_long", "\(replies)")
        // Then the end of the stream: no later commit is needed for the server to let the connection go.
        var entry = pollfd(fd: client.rawDescriptor, events: Int16(POLLIN), revents: 0)
        var byte: UInt8 = 0
        var ended = false
        let deadline = Date().addingTimeInterval(5)
        while !ended, Date() < deadline {
            guard poll(&entry, 1, 100) == 1 else { continue }
            ended = read(client.rawDescriptor, &byte, 1) == 0
        }
        #expect(ended, "the connection stayed open")
    }

    /// Subscribers that connected at different times get their heartbeats in a few shared passes, not one pass
    /// each: a heartbeat may go up to a quarter of the interval early, so a pass takes every one due that soon.
    @Test func heartbeatsOfSubscribersConnectedAtDifferentTimesGoOutTogether() throws {
        let fixture = try EventFixture(options: ["--heartbeat-interval", "200ms"])
        var clients: [SocketClient] = []
        for _ in 0..<20 {
            clients.append(try Self.categorySubscriber(fixture))
            usleep(10_000)
        }
        // When each heartbeat arrives, over 1.2 s (6 intervals).
        var arrivals: [Date] = []
        var entries = clients.map { pollfd(fd: $0.rawDescriptor, events: Int16(POLLIN), revents: 0) }
        let deadline = Date().addingTimeInterval(1.2)
        while Date() < deadline {
            guard poll(&entries, nfds_t(entries.count), 50) > 0 else { continue }
            let now = Date()
            for index in entries.indices where entries[index].revents != 0 {
                let line = try #require(clients[index].readLine())
                #expect(line.contains(#""heartbeat""#), "\(line)")
                arrivals.append(now)
            }
        }
        // One pass per 200 ms for each of the 20 (spread over 200 ms) would be about 120 moments; grouped,
        // at most one per 50 ms (about 24).
        var moments = 0
        var last = Date.distantPast
        for arrival in arrivals.sorted() {
            if arrival.timeIntervalSince(last) > 0.004 { moments += 1 }
            last = arrival
        }
        #expect(arrivals.count >= 80, "\(arrivals.count) heartbeats")
        #expect(moments <= 50, "\(moments) moments for \(arrivals.count) heartbeats")
    }
}
