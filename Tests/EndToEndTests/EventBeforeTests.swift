import CoexistHistory
import CoexistLegacyStore
import CoexistStore
import Foundation
import TestSupport
import Testing

/// What coexistd remembers of objects to give updates and deletes their `before` is never a value that
/// changed without a change naming it: attributes the store's triggers maintain, relationships without an
/// inverse (a deleted target clears them by `SET NULL`, on no object's change).
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
        let fixture = try EventFixture { shared in
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
}
