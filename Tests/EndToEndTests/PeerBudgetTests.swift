import CoexistHistory
import CoexistSQLite
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What one peer of the event socket can make coexistd hold: every request's numbers are checked, and every
/// resource has a budget; a peer over one is told and closed, and the others do not notice.
@Suite(.serialized) struct PeerBudgetTests {
    /// Commits `count` legacy transactions through the test helper (another process).
    static func history(_ fixture: EventFixture, _ count: Int) throws {
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: ProductProcess.productsDirectory + "/coexist-test-helper")
        writer.arguments = ["legacy-writer", fixture.shared.legacy.path, "\(count)", "old-app"]
        writer.standardOutput = FileHandle.nullDevice
        try writer.run()
        writer.waitUntilExit()
    }

    /// A status reply (asked again when one is slow to come: the test suite also runs under ThreadSanitizer).
    static func status(_ fixture: EventFixture) throws -> [String: Any] {
        try reply(fixture, #"{"op":"status"}"#)
    }

    /// The reply to `request` on a new connection, asked again up to nine times (5 s each) when it is slow to
    /// come (the test suite also runs under ThreadSanitizer, on slow machines).
    static func reply(_ fixture: EventFixture, _ request: String) throws -> [String: Any] {
        for _ in 0..<9 {
            if let reply = try? fixture.client().request(request) { return reply }
        }
        return try fixture.client().request(request)
    }

    /// Extreme tokens never trap: `since` Int64.max, an `ack` beyond the last token (refused), and a stored
    /// consumer mark of Int64.max.
    @Test func extremeTokensAreCheckedNotTrapped() throws {
        let fixture = try EventFixture()
        let token = try fixture.legacyInsert("one")
        let far = try fixture.client()
        let reply = try far.request(#"{"op":"subscribe","since":9223372036854775807}"#)
        #expect(reply["type"] as? String == "subscribed")
        #expect(try fixture.client().request(#"{"op":"ping"}"#)["type"] as? String == "pong")
        let named = try fixture.client()
        #expect(try named.request(#"{"op":"subscribe","since":0,"name":"c1"}"#)["type"] as? String == "subscribed")
        var beyond: [String: Any] = [:]
        for _ in 0..<10 {
            guard let line = named.readLine(),
                let message = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            else { break }
            if message["type"] as? String == "end_of_backlog" {
                named.send(#"{"op":"ack","token":9223372036854775807}"# + "\n")
            }
            if message["type"] as? String == "error" {
                beyond = message
                break
            }
        }
        #expect(beyond["code"] as? String == "invalid_request", "\(beyond)")
        #expect(try named.request(#"{"op":"ack","token":\#(token)}"#)["type"] as? String == "acked")
        for body in [
            #"{"op":"wait","token":-1}"#, #"{"op":"wait","token":1,"timeout":-5}"#,
            #"{"op":"wait","token":1,"timeout":9223372036854775807}"#, #"{"op":"subscribe","since":-3}"#,
            #"{"op":"wait","token":99999999999999999999}"#,
        ] {
            #expect(try fixture.client().request(body)["code"] as? String == "invalid_request", "\(body)")
        }
        // A mark of Int64.max written by an older version: subscribing by that name must not trap.
        let writer = try Connection(path: fixture.shared.legacy.path)
        try writer.run("UPDATE coexist_consumer SET acked = 9223372036854775807 WHERE name = 'c1'")
        named.send(#"{"op":"ping"}"# + "\n")
        let again = try fixture.client()
        #expect(try again.request(#"{"op":"subscribe","name":"c1"}"#)["type"] as? String == "subscribed")
        #expect(try fixture.client().request(#"{"op":"ping"}"#)["type"] as? String == "pong")
        #expect(fixture.daemon.process.isRunning)
    }

    /// 60,000 pipelined waits on one connection: the connection is closed over its budget of pending
    /// requests, and another client's ping is answered meanwhile.
    @Test func pipelinedWaitsCannotStallTheServer() throws {
        let fixture = try EventFixture()
        let hostile = try fixture.client()
        let line = #"{"op":"wait","token":999999999,"timeout":600000}"# + "\n"
        let batch = String(repeating: line, count: 1_000)
        let sender = Thread {
            for _ in 0..<60 { hostile.send(batch) }
        }
        sender.start()
        let other = try fixture.client()
        for _ in 0..<20 {
            #expect(try other.request(#"{"op":"ping"}"#)["type"] as? String == "pong")
            usleep(20_000)
        }
        var closedOverBudget = false
        while let reply = hostile.readLine() {
            if reply.contains("over_budget") { closedOverBudget = true }
        }
        #expect(closedOverBudget)
        let status = try Self.status(fixture)
        #expect(status["waits"] as? Int == 0, "the closed connection's waits are gone: \(status)")
    }

    /// Non-reading subscribers with a long backlog and heartbeats every 100 ms: what the daemon queues for
    /// them stays under the backlog bound and does not grow.
    @Test func nonReadingSubscribersHoldBoundedMemory() throws {
        let fixture = try EventFixture(options: ["--heartbeat-interval", "100ms"])
        var idle = try Self.longBacklogSubscribers(fixture)
        // Once every backlog has filled up to its bound, nothing more is queued: 20 heartbeats a second
        // for 20 subscribers would add about 16 KB in two seconds. A backlog whose events all fit may still
        // be walking through the bridge's own transactions, which send nothing, when the queue looks settled
        // (slowly, under ThreadSanitizer): its `end_of_backlog` comes later, under 64 bytes each.
        let early = try Self.settledQueue(fixture)
        sleep(2)
        let late = try #require(try Self.status(fixture)["queuedBytes"] as? Int)
        #expect(late <= 20 * 320 * 1_024, "at most about the backlog bound each: \(late) bytes")
        #expect(late >= early && late - early <= 20 * 64, "heartbeats do not pile up: \(early) → \(late) bytes")
        #expect(try Self.reply(fixture, #"{"op":"ping"}"#)["type"] as? String == "pong")
        idle.removeAll()
    }

    /// Twenty subscribers starting on long backlogs (with values) do not hold the event thread: another
    /// client's ping is answered while their backlogs are still being read, not after all of them.
    @Test func longBacklogsDoNotHoldOtherClients() throws {
        let fixture = try EventFixture()
        var idle = try Self.longBacklogSubscribers(fixture)
        // Every subscribe was handled (its reply comes before any event); then both requests in one write, so
        // that they are answered in the same pass.
        for client in idle { #expect(client.readLine()?.contains(#""subscribed""#) == true) }
        let other = try fixture.client()
        other.send(#"{"op":"ping"}"# + "\n" + #"{"op":"status"}"# + "\n")
        #expect(other.readLine()?.contains(#""pong""#) == true)
        let status = try JSONSerialization.jsonObject(with: Data((other.readLine() ?? "").utf8)) as? [String: Any]
        let atPong = try #require(status?["queuedBytes"] as? Int)
        let settled = try Self.settledQueue(fixture)
        #expect(settled > 20 * 128 * 1_024, "every backlog reached its bound: \(settled) bytes")
        #expect(atPong < settled / 4, "answered before the backlogs were read: \(atPong) of \(settled) bytes")
        idle.removeAll()
    }

    /// A backlog whose read fails (a stored value that fits no attribute type, read for `values`) is tried
    /// again after a delay, not at once: the subscriber is told at each try, and the row mended 5 ms after
    /// the first is read at a later try, before the five errors that close a client (tried back to back, the
    /// five come within a millisecond); the backlog then goes on to its end.
    @Test func aFailedBacklogReadIsTriedAgainLater() throws {
        let fixture = try EventFixture()
        var tokens: [Int64] = []
        for index in 0..<3 { tokens.append(try fixture.legacyInsert("retried \(index)")) }
        let last = try #require(tokens.last)
        #expect(
            try Self.reply(fixture, #"{"op":"wait","token":\#(last),"timeout":20000}"#)["type"] as? String == "waited"
        )
        let writer = try Connection(path: fixture.shared.legacy.path)
        try writer.run("UPDATE ZTASK SET ZPRIORITY = 'high' WHERE ZTITLE = 'retried 0'")
        let subscriber = try fixture.client()
        subscriber.send(#"{"op":"subscribe","since":0,"values":true}"# + "\n")
        var first = false
        while !first, let line = subscriber.readLine() { first = line.contains(#""code":"internal""#) }
        try #require(first)
        usleep(5_000)
        try writer.run("UPDATE ZTASK SET ZPRIORITY = 1 WHERE ZTITLE = 'retried 0'")
        let messages = try fixture.collect(subscriber) { $0["type"] as? String == "end_of_backlog" }
        let failures = 1 + messages.filter { $0["code"] as? String == "internal" }.count
        #expect(failures < 5, "\(failures) failed tries")
        #expect(messages.last?["type"] as? String == "end_of_backlog")
        let delivered = Set(messages.compactMap { $0["type"] as? String == "event" ? $0["token"] as? Int : nil })
        #expect(Set(tokens.map(Int.init)).isSubset(of: delivered))
    }

    /// Twenty subscribers (`values`) that read nothing, sent their subscribe from 0 after 400 transactions.
    static func longBacklogSubscribers(_ fixture: EventFixture) throws -> [SocketClient] {
        try history(fixture, 400)
        return try (0..<20).map { _ in
            let client = try fixture.client()
            client.send(#"{"op":"subscribe","since":0,"values":true}"# + "\n")
            return client
        }
    }

    /// The bytes queued once they stop growing: two readings 300 ms apart agree (and are not 0: the backlogs
    /// are read a time budget at a time, so the first reading may come before any of them).
    static func settledQueue(_ fixture: EventFixture) throws -> Int {
        var last = -1
        for _ in 0..<400 {
            usleep(300_000)
            let now = try #require(try status(fixture)["queuedBytes"] as? Int)
            if now == last, now > 0 { return now }
            last = now
        }
        return last
    }

    /// Filter sets are shared and freed with their last subscription: 300 connections with distinct
    /// 200-author filters come and go, and none is kept.
    @Test func filterSetsAreFreedWithTheirLastUser() throws {
        let fixture = try EventFixture()
        for round in 0..<3 {
            var clients: [SocketClient] = []
            for index in 0..<100 {
                let authors = (0..<200).map { "\"author-\(round)-\(index)-\($0)\"" }.joined(separator: ",")
                let client = try fixture.client()
                #expect(
                    try client.request(#"{"op":"subscribe","since":"now","authors":[\#(authors)]}"#)["type"] as? String
                        == "subscribed"
                )
                clients.append(client)
            }
            #expect(try Self.status(fixture)["filterSets"] as? Int == 100)
            clients.removeAll()
            var sets = -1
            for _ in 0..<100 where sets != 0 {
                usleep(20_000)
                sets = try Self.status(fixture)["filterSets"] as? Int ?? -1
            }
            #expect(sets == 0, "round \(round)")
        }
    }

    /// A connection closing after errors (or an over-long line) that does not read is closed within the
    /// grace period, not kept holding a slot.
    @Test func aClosingConnectionThatDoesNotReadIsClosed() throws {
        let fixture = try EventFixture(options: ["--request-timeout", "1s"])
        let hostile = try fixture.client()
        // Fill the daemon's send buffer for this connection, then make it close for its errors.
        hostile.send(String(repeating: #"{"op":"status"}"# + "\n", count: 20_000))
        hostile.send(String(repeating: "garbage\n", count: 10))
        var clients = -1
        for _ in 0..<200 where clients != 1 {
            usleep(20_000)
            clients = try Self.status(fixture)["clients"] as? Int ?? -1
        }
        #expect(clients == 1, "only the status connection is left")
    }

    /// Durable consumers are bounded by max-consumers.
    @Test func durableConsumersAreBounded() throws {
        let fixture = try EventFixture(options: ["--max-consumers", "3"])
        var kept: [SocketClient] = []
        for index in 0..<3 {
            let client = try fixture.client()
            let reply = try client.request(#"{"op":"subscribe","since":"now","name":"c\#(index)"}"#)
            #expect(reply["type"] as? String == "subscribed", "c\(index): \(reply)")
            kept.append(client)
        }
        let refused = try fixture.client().request(#"{"op":"subscribe","since":"now","name":"c9"}"#)
        #expect(refused["code"] as? String == "too_many_consumers", "\(refused)")
        let known = try fixture.client().request(#"{"op":"subscribe","since":"now","name":"c1"}"#)
        #expect(known["type"] as? String == "subscribed", "a known name still resumes")
        // Registered by the bridge thread, just after the replies.
        var rows: [[SQLiteValue]] = []
        for _ in 0..<100 {
            rows = try RawSQLite.rows(fixture.shared.legacy.path, "SELECT count(*) FROM coexist_consumer")
            if rows.first?.first == .integer(3) { break }
            usleep(20_000)
        }
        #expect(rows.first?.first == .integer(3))
    }

    /// `max-line-length` is exact: a line of exactly the limit is served, one byte more is refused.
    @Test func lineLengthIsExact() throws {
        let fixture = try EventFixture(options: ["--max-line-length", "1024"])
        let prefix = #"{"op":"ping","pad":""#
        let suffix = #""}"#
        let fits = prefix + String(repeating: "x", count: 1_024 - prefix.count - suffix.count) + suffix
        #expect(fits.utf8.count == 1_024)
        #expect(try fixture.client().request(fits)["type"] as? String == "pong")
        let over = prefix + String(repeating: "x", count: 1_025 - prefix.count - suffix.count) + suffix
        #expect(try fixture.client().request(over)["code"] as? String == "line_too_long")
    }
}
