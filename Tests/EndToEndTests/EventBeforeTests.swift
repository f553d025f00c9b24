import CoexistHistory
import CoexistLegacyStore
import CoexistStore
import Foundation
import TestSupport
import Testing

/// A live subscriber with values gets `before` for updates and deletes of either side from what coexistd
/// remembers of the objects it published; never a value that changed without a change naming it (attributes
/// the store's triggers maintain, relationships without an inverse, which a deleted target clears by
/// `SET NULL` on no change of their owner), nor one a change coexistd did not see left stale.
@Suite struct EventBeforeTests {
    /// Reads `client` until the event of `token` for `entity`, which must carry its own values.
    private static func event(
        _ fixture: EventFixture,
        _ client: SocketClient,
        _ token: Int64?,
        entity: String
    ) throws -> [String: Any] {
        let token = try #require(token)
        let messages = try fixture.collect(client) {
            $0["type"] as? String == "event" && Int64($0["token"] as? Int ?? 0) == token
                && $0["entity"] as? String == entity
        }
        let event = try #require(messages.last)
        #expect(event["asOf"] == nil, "each save waits for its event: \(event)")
        return event
    }

    private static func subscribe(_ fixture: EventFixture) throws -> SocketClient {
        let client = try fixture.client()
        #expect(
            try client.request(#"{"op":"subscribe","since":"now","values":true}"#)["type"] as? String == "subscribed"
        )
        return client
    }

    @Test func anAttributeATriggerMaintainsIsNeverRemembered() throws {
        // The store's own trigger rewrites a task's title whenever its priority changes: an update naming
        // only the priority changes the title too.
        let fixture = try EventFixture { shared, _ in
            try shared.legacy.connection.execute(
                """
                CREATE TRIGGER ZT_ZTASK_RETITLE AFTER UPDATE OF ZPRIORITY ON ZTASK FOR EACH ROW
                BEGIN UPDATE ZTASK SET ZTITLE = 'retitled ' || NEW.ZPRIORITY WHERE Z_PK = NEW.Z_PK; END
                """
            )
        }
        let client = try Self.subscribe(fixture)
        var task = ObjectID(entity: "Task", pk: 0)
        let inserted = try fixture.shared.legacy.save(SaveMetadata(author: "old-app")) { save in
            task = try save.insert(
                "Task",
                [
                    "id": .uuid((0..<16).map { _ in UInt8.random(in: 0...255) }), "title": .string("first"),
                    "createdAt": .date(0), "priority": .integer(0),
                ]
            )
        }
        _ = try Self.event(fixture, client, inserted.token, entity: "Task")
        let updated = try fixture.shared.legacy.save(SaveMetadata(author: "old-app")) { save in
            try save.update(task, ["priority": .integer(1)])
        }
        let update = try Self.event(fixture, client, updated.token, entity: "Task")
        #expect((update["before"] as? [String: Any])?["priority"] as? Int == 0, "\(update)")
        let deleted = try fixture.shared.legacy.save(SaveMetadata(author: "old-app")) { save in
            try save.delete(task)
        }
        let before = try Self.event(fixture, client, deleted.token, entity: "Task")["before"] as? [String: Any]
        let title = before?["title"] as? String
        #expect(title == nil || title == "retitled 1", "never the stale title: \(String(describing: before))")
        #expect(before?["priority"] as? Int == 1, "\(String(describing: before))")
    }

    @Test func aRelationshipWithoutAnInverseIsNeverRemembered() throws {
        let fixture = try EventFixture(
            modelXML: """
                <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
                <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                    <entity name="Owner" representedClassName="Owner" syncable="YES">
                        <attribute name="id" attributeType="UUID"/>
                        <attribute name="name" optional="YES" attributeType="String"/>
                        <relationship name="pet" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Pet"/>
                    </entity>
                    <entity name="Pet" representedClassName="Pet" syncable="YES">
                        <attribute name="id" attributeType="UUID"/>
                        <attribute name="name" optional="YES" attributeType="String"/>
                    </entity>
                </model>
                """
        )
        let client = try Self.subscribe(fixture)
        var owner = ObjectRef(entity: "Owner", id: "")
        var pet = ObjectRef(entity: "Pet", id: "")
        let created = try fixture.shared.new.save(SaveMetadata(author: "new-app")) { save in
            pet = try save.insert("Pet", id: nil, ["name": .string("Rex")])
            owner = try save.insert("Owner", id: nil, ["name": .string("Ann")])
            try save.setToOne(owner, "pet", pet)
        }
        let insert = try Self.event(fixture, client, created.token, entity: "Owner")
        #expect((insert["values"] as? [String: Any])?["pet"] as? String == pet.id, "\(insert)")
        // The pet's row goes; the owner's reference to it is cleared by the schema, on no change of the owner.
        let gone = try fixture.shared.new.save(SaveMetadata(author: "new-app")) { save in try save.delete(pet) }
        _ = try Self.event(fixture, client, gone.token, entity: "Pet")
        let deleted = try fixture.shared.new.save(SaveMetadata(author: "new-app")) { save in try save.delete(owner) }
        let before = try Self.event(fixture, client, deleted.token, entity: "Owner")["before"] as? [String: Any]
        #expect(before?["pet"] as? String == nil, "never the deleted pet: \(String(describing: before))")
        #expect(before?["name"] as? String == "Ann", "\(String(describing: before))")
    }

    /// A live subscriber with values gets `before` for legacy updates and deletes too: what coexistd
    /// published of the object's previous change, exactly as of it. A change coexistd did not see with its
    /// values (the bridge's copy of a new-side edit, which no subscriber takes) leaves no stale `before`.
    @Test func legacyUpdatesSayWhatWasBeforeWhenCoexistdSawIt() throws {
        let fixture = try EventFixture()
        let client = try Self.subscribe(fixture)
        func event(_ token: Int64?) throws -> [String: Any] { try Self.event(fixture, client, token, entity: "Task") }
        func before(_ token: Int64?) throws -> [String: Any]? { try event(token)["before"] as? [String: Any] }
        func save(_ body: (LegacySave) throws -> Void) throws -> Int64? {
            try fixture.shared.legacy.save(SaveMetadata(author: "old-app")) { try body($0) }.token
        }
        let categoryID = (0..<16).map { _ in UInt8.random(in: 0...255) }
        var task = ObjectID(entity: "Task", pk: 0)
        var category = ObjectID(entity: "Category", pk: 0)
        let created = try save { save in
            category = try save.insert("Category", ["id": .uuid(categoryID), "name": .string("Home")])
            task = try save.insert(
                "Task",
                [
                    "id": .uuid((0..<16).map { _ in UInt8.random(in: 0...255) }), "title": .string("old"),
                    "createdAt": .date(0), "priority": .integer(0),
                ]
            )
        }
        #expect(try event(created)["before"] == nil, "an insert has no before")
        let first = try before(try save { try $0.update(task, ["priority": .integer(9)]) })
        #expect(first?["priority"] as? Int == 0 && first?.count == 1, "\(String(describing: first))")
        let second = try before(try save { try $0.update(task, ["title": .string("older")]) })
        #expect(second?["title"] as? String == "old" && second?.count == 1, "\(String(describing: second))")
        // Once the bridge has recorded the category's identity: until then, it may still change.
        try fixture.waitUntilCaughtUp()
        let linked = try before(try save { try $0.setToOne(task, "category", category) })
        #expect(linked?["category"] is NSNull, "\(String(describing: linked))")
        let categoryText = UUID(uuid: categoryID.withUnsafeBytes { $0.load(as: uuid_t.self) }).uuidString.lowercased()
        let cleared = try before(try save { try $0.setToOne(task, "category", nil) })
        #expect(cleared?["category"] as? String == categoryText, "\(String(describing: cleared))")
        // A delete: its tombstone, and all that was remembered of the object.
        let deleted = try before(try save { try $0.delete(task) })
        #expect(
            deleted?["priority"] as? Int == 9 && deleted?["title"] as? String == "older",
            "\(String(describing: deleted))"
        )
        #expect(deleted?["id"] != nil, "\(String(describing: deleted))")

        // Edited on the new side: the bridge's copy changes the legacy object unseen.
        var edited = ObjectID(entity: "Task", pk: 0)
        let inserted = try save { save in
            edited = try save.insert(
                "Task",
                [
                    "id": .uuid((0..<16).map { _ in UInt8.random(in: 0...255) }), "title": .string("shared"),
                    "createdAt": .date(0), "priority": .integer(0),
                ]
            )
        }
        _ = try event(inserted)
        try fixture.waitUntilCaughtUp()
        let ref = try #require(try fixture.shared.new.refs(of: "Task", holding: ["title": .string("shared")]).first)
        _ = try fixture.shared.new.save(SaveMetadata(author: "new-app")) { save in
            try save.update(ref, ["priority": .integer(7)])
        }
        try fixture.waitUntilCaughtUp()
        let after = try before(try save { try $0.update(edited, ["priority": .integer(8)]) })
        #expect(
            after?["priority"] == nil || after?["priority"] as? Int == 7,
            "never the stale 0: \(String(describing: after))"
        )
    }
}
