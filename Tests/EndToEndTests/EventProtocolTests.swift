import CoexistHistory
import Foundation
import TestSupport
import Testing

/// Protocol 2 on the socket: request ids echoed in every reply (immediate or deferred), `unsubscribe`, the
/// version in `subscribed` and `pong`; a request without an id is answered as protocol 1 answered it.
@Suite struct EventProtocolTests {
    @Test func repliesEchoTheRequestID() throws {
        let fixture = try EventFixture()
        let client = try fixture.client()
        let pong = try client.request(#"{"op":"ping","id":7}"#)
        #expect(pong["type"] as? String == "pong")
        #expect(pong["id"] as? Int == 7)
        #expect(pong["protocol"] as? Int == 2)
        let plain = try client.request(#"{"op":"ping"}"#)
        #expect(plain["id"] == nil)
        #expect(try client.request(#"{"op":"status","id":"s"}"#)["id"] as? String == "s")
        let error = try client.request(#"{"op":"nothing","id":"e1"}"#)
        #expect(error["code"] as? String == "unknown_op")
        #expect(error["id"] as? String == "e1")
        #expect(try client.request(#"{"op":"ping","id":{"nested":1}}"#)["code"] as? String == "invalid_request")
        let long = String(repeating: "x", count: 201)
        #expect(try client.request(#"{"op":"ping","id":"\#(long)"}"#)["code"] as? String == "invalid_request")
        // A request that does not decode still gets its id back when the id itself is readable (another
        // connection: errors are counted per connection).
        let other = try fixture.client()
        let badField = try other.request(#"{"op":"subscribe","since":-5,"id":"b"}"#)
        #expect(badField["code"] as? String == "invalid_request")
        #expect(badField["id"] as? String == "b")
        let noOp = try other.request(#"{"id":9}"#)
        #expect(noOp["code"] as? String == "invalid_request")
        #expect(noOp["id"] as? Int == 9)
        let broken = try other.request(#"{"id":9,"op":"#)
        #expect(broken["code"] as? String == "invalid_json")
        #expect(broken["id"] == nil)

        // Deferred replies carry theirs too: a wait answered later, an ack answered once durable.
        let token = try fixture.legacyInsert("waited")
        let waited = try client.request(#"{"op":"wait","token":\#(token),"id":"w"}"#)
        #expect(waited["type"] as? String == "waited")
        #expect(waited["id"] as? String == "w")
        let consumer = try fixture.client()
        let subscribed = try consumer.request(#"{"op":"subscribe","name":"indexer","since":0,"id":1}"#)
        #expect(subscribed["type"] as? String == "subscribed")
        #expect(subscribed["id"] as? Int == 1)
        #expect(subscribed["protocol"] as? Int == 2)
        _ = try fixture.collect(consumer) { $0["type"] as? String == "end_of_backlog" }
        consumer.send(#"{"op":"ack","token":\#(token),"id":"a"}"# + "\n")
        let acked = try fixture.collect(consumer) { $0["type"] as? String == "acked" }.last
        #expect(acked?["id"] as? String == "a")
    }

    @Test func unsubscribeEndsTheEventsAndKeepsTheConnection() throws {
        let fixture = try EventFixture()
        let client = try fixture.client()
        #expect(try client.request(#"{"op":"subscribe","since":"now"}"#)["type"] as? String == "subscribed")
        _ = try fixture.collect(client) { $0["type"] as? String == "end_of_backlog" }
        let first = try fixture.legacyInsert("before")
        let before = try fixture.collect(client) { Int64($0["token"] as? Int ?? 0) == first }
        #expect(before.contains { $0["type"] as? String == "event" })
        client.send(#"{"op":"unsubscribe","id":"u"}"# + "\n")
        let reply = try fixture.collect(client) { $0["type"] as? String == "unsubscribed" }.last
        #expect(reply?["id"] as? String == "u")
        // Where a new subscription would resume: after the insert (and its mirror, filtered out).
        #expect((reply?["token"] as? Int).map { Int64($0) >= first } == true)
        let later = try fixture.legacyInsert("after")
        // The connection still answers; no event of the later commit comes, before or after it is mirrored.
        client.send(#"{"op":"wait","token":\#(later)}"# + "\n")
        var afterwards = try fixture.collect(client) { $0["type"] as? String == "waited" }
        client.send(#"{"op":"ping","id":2}"# + "\n")
        afterwards += try fixture.collect(client) { $0["type"] as? String == "pong" }
        #expect(afterwards.last?["id"] as? Int == 2)
        #expect(!afterwards.contains { $0["type"] as? String == "event" })
        let again = try client.request(#"{"op":"unsubscribe","id":3}"#)
        #expect(again["code"] as? String == "not_subscribed")
        #expect(again["id"] as? Int == 3)
    }
}
