import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import CoexistStore
import Foundation
import TestSupport
import Testing

/// Resuming without loss: a subscriber cut off inside a transaction is told a token before it, and a durable
/// consumer that reconnects stays active.
@Suite struct EventResumeTests {
    /// A subscriber cut off as lagged while a transaction sent one event per message (here: with values) is
    /// partly written is told to resume before that transaction, not at it (the `lagged` token had counted a
    /// transaction delivered once any of its events was): resuming from the token it is given, it gets every
    /// event, and transactions larger than its queue limit whole (one was cut off again on every resume).
    @Test func aSubscriberLaggingInsideATransactionResumesBeforeIt() throws {
        let fixture = try EventFixture(options: ["--queue-limit", "20"])
        let slow = try fixture.client()
        #expect(try slow.request(#"{"op":"subscribe","since":"now","values":true}"#)["type"] as? String == "subscribed")
        #expect(slow.readLine()?.contains("end_of_backlog") == true)
        // Read to know when the server has handled both transactions (the slow one's fate is decided then).
        let watcher = try fixture.client()
        #expect(try watcher.request(#"{"op":"subscribe","since":"now"}"#)["type"] as? String == "subscribed")
        #expect(watcher.readLine()?.contains("end_of_backlog") == true)
        // Each fills the socket and the queue: the subscriber, which reads nothing until it is cut off, is cut
        // off inside one of them.
        var tokens: [(token: Int64, count: Int)] = []
        // 0.6 and 0.8 MB: more than a Unix socket's send buffer holds by default (208 KiB).
        for count in [300, 400] {
            let result = try fixture.shared.legacy.save(SaveMetadata(author: "old-app")) { save in
                for index in 0..<count {
                    var values = DemoStore.mandatoryValues(for: "Task", in: fixture.shared.legacy)
                    values["id"] = .uuid((0..<16).map { _ in UInt8.random(in: 0...255) })
                    values["title"] = .string("task \(index) " + String(repeating: "x", count: 2_000))
                    _ = try save.insert("Task", values)
                }
            }
            tokens.append((try #require(result.token), count))
        }
        func indices(_ messages: [[String: Any]], _ token: Int64) -> Set<Int> {
            Set(
                messages.filter { $0["type"] as? String == "event" && $0["token"] as? Int == Int(token) }
                    .compactMap { $0["index"] as? Int }
            )
        }
        _ = try fixture.collect(watcher) {
            $0["type"] as? String == "event" && $0["token"] as? Int == Int(tokens[1].token)
        }
        let before = try fixture.collect(slow) { $0["type"] as? String == "lagged" }
        let lagged = try #require(before.last { $0["type"] as? String == "lagged" })
        let resumeFrom = Int64(lagged["token"] as? Int ?? -1)
        #expect(
            tokens.contains { (1..<$0.count).contains(indices(before, $0.token).count) },
            "cut off inside a transaction: \(tokens.map { indices(before, $0.token).count })"
        )
        let resumed = try fixture.client()
        resumed.send(#"{"op":"subscribe","since":\#(resumeFrom),"values":true}"# + "\n")
        let after = try fixture.collect(resumed) { $0["type"] as? String == "end_of_backlog" }
        for (token, count) in tokens {
            #expect(
                indices(before, token).union(indices(after, token)) == Set(0..<count),
                "nothing of \(token) lost (resumed after \(resumeFrom)): \(after.filter { $0["type"] as? String != "event" })"
            )
        }
    }

    /// A durable consumer that subscribes again is heard from (its `updated_at` moves), though it acks
    /// nothing: it does not expire while it keeps reconnecting, and its position stays.
    @Test func subscribingAgainKeepsADurableConsumerActive() throws {
        let fixture = try EventFixture()
        let path = fixture.shared.legacy.path
        let first = try fixture.client()
        #expect(try first.request(#"{"op":"subscribe","name":"indexer"}"#)["type"] as? String == "subscribed")
        func row() throws -> (acked: Int64, updated: Double)? {
            let rows = try RawSQLite.rows(path, "SELECT acked, updated_at FROM coexist_consumer WHERE name = 'indexer'")
            return rows.first.map { ($0[0].integerValue ?? -1, $0[1].numericValue ?? 0) }
        }
        var deadline = Date().addingTimeInterval(30)
        while try row() == nil && Date() < deadline { usleep(20_000) }
        let acked = try #require(try row()).acked
        // As if last heard from eight days ago.
        try RawSQLite.execute(
            path,
            "UPDATE coexist_consumer SET updated_at = updated_at - 691200 WHERE name = 'indexer'"
        )
        let old = try #require(try row()).updated
        let again = try fixture.client()
        #expect(try again.request(#"{"op":"subscribe","name":"indexer"}"#)["type"] as? String == "subscribed")
        deadline = Date().addingTimeInterval(30)
        while (try row()?.updated ?? 0) <= old && Date() < deadline { usleep(20_000) }
        let now = try #require(try row())
        #expect(now.updated > old + 600_000, "heard from again")
        #expect(now.acked == acked, "the position stays")
    }
}
