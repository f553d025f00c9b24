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

    /// Relationship changes on both sides appear in the values: a to-one set and cleared (its target's
    /// identity, then null), to-manys added to, removed from and reordered (their members' identities, in
    /// the relationship's order when ordered, sorted otherwise). Each save waits for its events, so that
    /// their values are their own.
    @Test func relationshipChangesAppearInTheValuesOnBothSides() throws {
        let fixture = try EventFixture(library: ())
        let client = try fixture.client()
        #expect(
            try client.request(#"{"op":"subscribe","since":"now","values":true}"#)["type"] as? String == "subscribed"
        )
        /// The events of transaction `token`, by the object's legacy `Z_PK` or identity.
        func events(_ token: Int64?) throws -> [[String: Any]] {
            let token = try #require(token)
            let messages = try fixture.collect(client) {
                $0["type"] as? String == "event" && Int64($0["token"] as? Int ?? 0) == token
                    && $0["index"] as? Int == ($0["count"] as? Int ?? 0) - 1
            }
            let own = messages.filter { $0["type"] as? String == "event" && Int64($0["token"] as? Int ?? 0) == token }
            #expect(own.allSatisfy { $0["asOf"] == nil })
            return own
        }
        func values(_ events: [[String: Any]], _ object: ObjectID) -> [String: Any] {
            let event = events.first {
                ($0["pk"] as? Int).map(Int64.init) == object.pk && $0["entity"] as? String == object.entity
            }
            return event?["values"] as? [String: Any] ?? [:]
        }
        func values(_ events: [[String: Any]], id: String?) -> [String: Any] {
            events.first { $0["id"] as? String == id }?["values"] as? [String: Any] ?? [:]
        }
        let legacy = fixture.shared.legacy
        let author = SaveMetadata(author: "old-app")
        var shelf = ObjectID(entity: "Shelf", pk: 0)
        var books: [ObjectID] = []
        let created = try legacy.save(author) { save in
            shelf = try save.insert("Shelf", ["label": .string("Fiction")])
            books = try (1...3).map { try save.insert("Book", ["title": .string("Book \($0)")]) }
        }
        // These objects have no identity attribute: they have one once the bridge mirrored them.
        _ = try events(created.token)
        try fixture.waitUntilCaughtUp()
        let reader = try fixture.client()
        reader.send(#"{"op":"subscribe","since":\#(try #require(created.token) - 1)}"# + "\n")
        let backlog = try fixture.collect(reader) { $0["type"] as? String == "end_of_backlog" }
        func identity(_ object: ObjectID) -> String? {
            backlog.first {
                ($0["pk"] as? Int).map(Int64.init) == object.pk && $0["entity"] as? String == object.entity
            }?[
                "id"
            ] as? String
        }
        let ids = books.map(identity)
        let shelfID = try #require(identity(shelf))
        #expect(ids.allSatisfy { $0 != nil })

        let related = try legacy.save(author) { save in try save.add(shelf, to: "books", [books[0], books[1]]) }
        let first = try events(related.token)
        #expect(values(first, shelf)["books"] as? [String] == [ids[0], ids[1]].compactMap { $0 })
        #expect(values(first, books[0])["shelf"] as? String == shelfID)
        #expect(values(first, books[2]).isEmpty)

        let reordered = try legacy.save(author) { save in
            try save.setOrdered(shelf, "books", [books[1], books[0], books[2]])
        }
        let second = try events(reordered.token)
        #expect(values(second, shelf)["books"] as? [String] == [ids[1], ids[0], ids[2]].compactMap { $0 })
        #expect(values(second, books[2])["shelf"] as? String == shelfID)

        let removed = try legacy.save(author) { save in try save.remove(shelf, from: "books", [books[0]]) }
        let third = try events(removed.token)
        #expect(values(third, shelf)["books"] as? [String] == [ids[1], ids[2]].compactMap { $0 })
        #expect(values(third, books[0])["shelf"] is NSNull)

        // The new side, once the bridge has mirrored the legacy saves.
        try fixture.waitUntilCaughtUp()
        let bookRefs = ids.map { ObjectRef(entity: "Book", id: $0 ?? "") }
        let newAuthor = SaveMetadata(author: "new-app")
        let moved = try fixture.shared.new.save(newAuthor) { save in
            try save.setOrdered(ObjectRef(entity: "Shelf", id: shelfID), "books", [bookRefs[2], bookRefs[1]])
        }
        let fourth = try events(moved.token)
        #expect(values(fourth, id: shelfID)["books"] as? [String] == [ids[2], ids[1]].compactMap { $0 })
        var tag = ObjectRef(entity: "Tag", id: "")
        let tagged = try fixture.shared.new.save(newAuthor) { save in
            tag = try save.insert("Tag", id: nil, ["name": .string("classic")])
            try save.add(tag, to: "books", [bookRefs[2], bookRefs[1]])
        }
        let fifth = try events(tagged.token)
        #expect(values(fifth, id: tag.id)["books"] as? [String] == [ids[1], ids[2]].compactMap { $0 }.sorted())
        #expect(values(fifth, id: ids[1])["tags"] as? [String] == [tag.id])
        let untagged = try fixture.shared.new.save(newAuthor) { save in
            try save.remove(tag, from: "books", [bookRefs[2]])
        }
        let sixth = try events(untagged.token)
        #expect(values(sixth, id: tag.id)["books"] as? [String] == [ids[1]].compactMap { $0 })
        #expect(values(sixth, id: ids[2])["tags"] as? [String] == [])
    }

    /// A to-many with more members than an event lists is sent as its count; one at the limit is listed.
    @Test func aLargeToManyIsSentAsItsCount() throws {
        let fixture = try EventFixture()
        let client = try fixture.client()
        #expect(
            try client.request(#"{"op":"subscribe","since":"now","values":true,"entities":["Category"]}"#)["type"]
                as? String == "subscribed"
        )
        let limit = 1_000
        var categories: [ObjectID] = []
        let saved = try fixture.shared.legacy.save(SaveMetadata(author: "old-app")) { save in
            for (name, size) in [("listed", limit), ("counted", limit + 1)] {
                let category = try save.insert(
                    "Category",
                    ["id": .uuid((0..<16).map { _ in UInt8.random(in: 0...255) }), "name": .string(name)]
                )
                categories.append(category)
                for index in 0..<size {
                    let task = try save.insert(
                        "Task",
                        [
                            "id": .uuid((0..<16).map { _ in UInt8.random(in: 0...255) }),
                            "title": .string("\(name) \(index)"), "createdAt": .date(0),
                        ]
                    )
                    try save.setToOne(task, "category", category)
                }
            }
        }
        var inserts: [Int64: [String: Any]] = [:]
        _ = try fixture.collect(client) { message in
            if message["type"] as? String == "event", Int64(message["token"] as? Int ?? 0) == saved.token,
                let pk = message["pk"] as? Int
            {
                inserts[Int64(pk)] = message["values"] as? [String: Any]
            }
            return inserts.count == 2
        }
        let listed = try #require(inserts[categories[0].pk]?["tasks"] as? [String])
        #expect(listed.count == limit)
        #expect(listed == listed.sorted())
        #expect((inserts[categories[1].pk]?["tasks"] as? [String: Any])?["count"] as? Int == limit + 1)
    }

    /// New-side commits record their values in the history: their events, read however late, carry their
    /// own values and no `asOf`.
    @Test func newSideEventsCarryTheValuesTheirCommitRecorded() throws {
        let fixture = try EventFixture()
        var task = ObjectRef(entity: "Task", id: "")
        var set: [Int64: Int64] = [:]
        let created = try fixture.shared.new.save(SaveMetadata(author: "new-app")) { save in
            task = try save.insert("Task", id: nil, ["title": .string("watched"), "createdAt": .date(0)])
        }
        for value in Int64(1)...3 {
            let saved = try fixture.shared.new.save(SaveMetadata(author: "new-app")) { save in
                try save.update(task, ["priority": .integer(value)])
            }
            set[try #require(saved.token)] = value
        }
        try fixture.waitUntilCaughtUp()
        let client = try fixture.client()
        client.send(#"{"op":"subscribe","since":\#(try #require(created.token) - 1),"values":true}"# + "\n")
        let messages = try fixture.collect(client) { $0["type"] as? String == "end_of_backlog" }
        let newEvents = messages.filter { $0["type"] as? String == "event" && $0["side"] as? String == "new" }
        #expect(newEvents.count == 4)
        for event in newEvents {
            #expect(event["asOf"] == nil, "\(event)")
            let values = event["values"] as? [String: Any] ?? [:]
            if let own = set[Int64(event["token"] as? Int ?? 0)] {
                #expect((values["priority"] as? Int).map(Int64.init) == own)
                #expect(Array(values.keys) == ["priority"])
            }
        }
        let insert = try #require(newEvents.first { Int64($0["token"] as? Int ?? 0) == created.token })
        #expect((insert["values"] as? [String: Any])?["title"] as? String == "watched")
        #expect((insert["values"] as? [String: Any])?["priority"] as? Int == 0)
    }

    /// `before`: a new-side update carries what its changed attributes and to-ones held before its save, a
    /// delete (either side) its tombstone, with what its save changed first as it was; an insert and a legacy
    /// update none when read from the backlog (Core Data's history records no values).
    @Test func updatesOfTheNewSideAndDeletesSayWhatWasBefore() throws {
        let fixture = try EventFixture()
        var task = ObjectRef(entity: "Task", id: "")
        var home = ObjectRef(entity: "Category", id: "")
        var work = ObjectRef(entity: "Category", id: "")
        let created = try fixture.shared.new.save(SaveMetadata(author: "new-app")) { save in
            home = try save.insert("Category", id: nil, ["name": .string("Home"), "color": .string("blue")])
            work = try save.insert("Category", id: nil, ["name": .string("Work"), "color": .string("red")])
            task = try save.insert("Task", id: nil, ["title": .string("first"), "createdAt": .date(0)])
            try save.setToOne(task, "category", home)
        }
        var updates: [Int64: (title: String, priority: Int)] = [:]
        for (index, title) in ["second", "third"].enumerated() {
            let saved = try fixture.shared.new.save(SaveMetadata(author: "new-app")) { save in
                try save.update(task, ["title": .string(title)])
                // Written twice in one save: before is what the save found, not its own first write.
                try save.update(task, ["priority": .integer(Int64(index + 5))])
                try save.update(task, ["priority": .integer(Int64(index + 1))])
            }
            updates[try #require(saved.token)] = (title, index + 1)
        }
        let moved = try #require(
            try fixture.shared.new.save(SaveMetadata(author: "new-app")) { save in
                try save.setToOne(task, "category", work)
            }.token
        )
        let removed = try #require(
            try fixture.shared.new.save(SaveMetadata(author: "new-app")) { save in try save.delete(task) }.token
        )
        // Changed, then deleted, in one save: before is what the object held before that save.
        var doomed = ObjectRef(entity: "Task", id: "")
        _ = try fixture.shared.new.save(SaveMetadata(author: "new-app")) { save in
            doomed = try save.insert("Task", id: nil, ["title": .string("kept"), "createdAt": .date(0)])
        }
        let changedAndDeleted = try #require(
            try fixture.shared.new.save(SaveMetadata(author: "new-app")) { save in
                try save.update(doomed, ["title": .string("changed")])
                try save.delete(doomed)
            }.token
        )
        try fixture.waitUntilCaughtUp()
        let client = try fixture.client()
        client.send(#"{"op":"subscribe","since":\#(try #require(created.token) - 1),"values":true}"# + "\n")
        let messages = try fixture.collect(client) { $0["type"] as? String == "end_of_backlog" }
        func event(_ token: Int64, _ side: String, entity: String = "Task") -> [String: Any]? {
            messages.first {
                $0["type"] as? String == "event" && Int64($0["token"] as? Int ?? 0) == token
                    && $0["side"] as? String == side && $0["entity"] as? String == entity
            }
        }
        #expect(event(try #require(created.token), "new")?["before"] == nil, "an insert has no before")
        let sorted = updates.keys.sorted()
        let first = try #require(event(sorted[0], "new")?["before"] as? [String: Any])
        #expect(first["title"] as? String == "first" && first["priority"] as? Int == 0, "\(first)")
        let second = try #require(event(sorted[1], "new")?["before"] as? [String: Any])
        #expect(second["title"] as? String == "second" && second["priority"] as? Int == 1, "\(second)")
        #expect(Set(second.keys) == ["title", "priority"])
        let move = try #require(event(moved, "new")?["before"] as? [String: Any])
        #expect(move["category"] as? String == home.id && move.count == 1, "\(move)")
        #expect((event(moved, "new")?["values"] as? [String: Any])?["category"] as? String == work.id)
        let deletion = try #require(event(removed, "new")?["before"] as? [String: Any])
        #expect(deletion["id"] as? String == task.id, "a delete's before is its tombstone: \(deletion)")
        let lastDelete = try #require(event(changedAndDeleted, "new"))
        #expect((lastDelete["before"] as? [String: Any])?["title"] as? String == "kept", "\(lastDelete)")
        #expect((lastDelete["before"] as? [String: Any])?["id"] as? String == doomed.id, "\(lastDelete)")

        // The bridge's copies on the legacy side, and legacy saves: no before for updates; a delete's tombstone.
        let legacy = try fixture.shared.legacy.save(SaveMetadata(author: "old-app")) { save in
            try save.insert(
                "Task",
                [
                    "id": .uuid((0..<16).map { _ in UInt8.random(in: 0...255) }), "title": .string("old"),
                    "createdAt": .date(0), "priority": .integer(0),
                ]
            )
        }
        let object = ObjectID(entity: "Task", pk: try #require(legacy.changes.first?.objectPK))
        let legacyUpdate = try #require(
            try fixture.shared.legacy.save(SaveMetadata(author: "old-app")) { save in
                try save.update(object, ["priority": .integer(9)])
            }.token
        )
        let legacyDelete = try #require(
            try fixture.shared.legacy.save(SaveMetadata(author: "old-app")) { save in try save.delete(object) }.token
        )
        try fixture.waitUntilCaughtUp()
        let live = try fixture.client()
        live.send(#"{"op":"subscribe","since":\#(try #require(legacy.token) - 1),"values":true}"# + "\n")
        let more = try fixture.collect(live) { $0["type"] as? String == "end_of_backlog" }
        let legacyEvents = more.filter { $0["type"] as? String == "event" && $0["side"] as? String == "legacy" }

        #expect(legacyEvents.first { Int64($0["token"] as? Int ?? 0) == legacyUpdate }?["before"] == nil)
        let tombstone = legacyEvents.first { Int64($0["token"] as? Int ?? 0) == legacyDelete }?["before"]
        #expect((tombstone as? [String: Any])?["id"] != nil, "\(String(describing: tombstone))")
    }
}
