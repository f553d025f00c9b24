import CoexistHistory
import CoexistLegacyStore
import CoexistStore
import Foundation
import TestSupport
import Testing

/// Event values are the object's state as of the event's token, or the event says which token they are from
/// (`asOf`): never a later value passed off as the event's own.
@Suite struct EventValuesTests {
    /// The priority each legacy save set, by token.
    private static func updatePriorities(_ fixture: EventFixture, _ values: [Int64]) throws -> [Int64: Int64] {
        let task = try fixture.shared.legacy.save(SaveMetadata(author: "old-app")) { save in
            try save.insert(
                "Task",
                [
                    "id": .uuid((0..<16).map { _ in UInt8.random(in: 0...255) }), "title": .string("watched"),
                    "createdAt": .date(0), "priority": .integer(0),
                ]
            )
        }
        let id = ObjectID(entity: "Task", pk: try #require(task.changes.first?.objectPK))
        var set: [Int64: Int64] = [:]
        for value in values {
            let saved = try fixture.shared.legacy.save(SaveMetadata(author: "old-app")) { save in
                try save.update(id, ["priority": .integer(value)])
            }
            if let token = saved.token { set[token] = value }
        }
        return set
    }

    /// Checks every legacy priority update event of `messages` against what its token set.
    private static func check(_ messages: [[String: Any]], _ set: [Int64: Int64]) -> Int {
        var checked = 0
        for event in messages where event["type"] as? String == "event" && event["side"] as? String == "legacy" {
            let token = Int64(event["token"] as? Int ?? 0)
            guard let own = set[token], let values = event["values"] as? [String: Any],
                let shown = (values["priority"] as? Int).map(Int64.init)
            else { continue }
            checked += 1
            if let asOf = event["asOf"] as? Int {
                #expect(Int64(asOf) > token, "token \(token): asOf \(asOf) is later")
            } else {
                #expect(shown == own, "token \(token) set \(own) but its event shows \(shown) as its own")
            }
        }
        return checked
    }

    @Test func aBacklogSaysWhichTokenItsValuesAreFrom() throws {
        let fixture = try EventFixture()
        let set = try Self.updatePriorities(fixture, [1, 2, 3])
        try fixture.waitUntilCaughtUp()
        let client = try fixture.client()
        client.send(#"{"op":"subscribe","since":0,"values":true}"# + "\n")
        let messages = try fixture.collect(client) { $0["type"] as? String == "end_of_backlog" }
        #expect(Self.check(messages, set) == 3)
        // The first two saves' events cannot show their own value (the row holds 3 now): they say so.
        let early = messages.filter {
            $0["type"] as? String == "event" && $0["side"] as? String == "legacy"
                && set[Int64($0["token"] as? Int ?? 0)].map { $0 < 3 } == true
        }
        #expect(early.count == 2)
        #expect(early.allSatisfy { $0["asOf"] != nil })
    }

    @Test func toOnesAreTheirTargetsIdentityOnBothSides() throws {
        let fixture = try EventFixture()
        let client = try fixture.client()
        #expect(
            try client.request(#"{"op":"subscribe","since":"now","values":true}"#)["type"] as? String == "subscribed"
        )
        // Each save waits for its event: its values are read before the next commit, so they are its own.
        func taskValues(after token: Int64?) throws -> [String: Any]? {
            let messages = try fixture.collect(client) {
                $0["type"] as? String == "event" && Int64($0["token"] as? Int ?? 0) == token
                    && $0["entity"] as? String == "Task"
            }
            let event = messages.last
            #expect(event?["asOf"] == nil)
            return event?["values"] as? [String: Any]
        }
        let categoryID = (0..<16).map { _ in UInt8.random(in: 0...255) }
        let linked = try fixture.shared.legacy.save(SaveMetadata(author: "old-app")) { save in
            let category = try save.insert("Category", ["id": .uuid(categoryID), "name": .string("Home")])
            let task = try save.insert(
                "Task",
                [
                    "id": .uuid((0..<16).map { _ in UInt8.random(in: 0...255) }), "title": .string("linked"),
                    "createdAt": .date(0),
                ]
            )
            try save.setToOne(task, "category", category)
        }
        let categoryText = UUID(uuid: categoryID.withUnsafeBytes { $0.load(as: uuid_t.self) }).uuidString.lowercased()
        #expect(try taskValues(after: linked.token)?["category"] as? String == categoryText)

        let taskPK = try #require(linked.changes.first { $0.entity == "Task" }?.objectPK)
        let cleared = try fixture.shared.legacy.save(SaveMetadata(author: "old-app")) { save in
            try save.setToOne(ObjectID(entity: "Task", pk: taskPK), "category", nil)
        }
        #expect(try taskValues(after: cleared.token)?["category"] is NSNull)

        let newSide = try fixture.shared.new.save(SaveMetadata(author: "new-app")) { save in
            let category = try save.insert("Category", id: nil, ["name": .string("Work")])
            let task = try save.insert("Task", id: nil, ["title": .string("new"), "createdAt": .date(0)])
            try save.setToOne(task, "category", category)
        }
        let newCategory = try #require(newSide.changes.first { $0.entity == "Category" }?.objectID)
        #expect(try taskValues(after: newSide.token)?["category"] as? String == newCategory)
    }

    @Test func liveEventsCarryTheirOwnValuesOrSaySo() throws {
        let fixture = try EventFixture()
        let client = try fixture.client()
        #expect(
            try client.request(#"{"op":"subscribe","since":"now","values":true}"#)["type"] as? String == "subscribed"
        )
        let set = try Self.updatePriorities(fixture, Array(1...30))
        let last = try #require(set.keys.max())
        let messages = try fixture.collect(client) {
            $0["type"] as? String == "event" && Int64($0["token"] as? Int ?? 0) == last
        }
        #expect(Self.check(messages, set) == 30)
    }
}
