import CoexistBridge
import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import Foundation
import TestSupport
import Testing

@testable import CoexistEvents

/// A legacy object the bridge has not mirrored yet is named by its identity attribute, which the app may still
/// change on no change of the objects naming it: a relationship naming it is sent, never remembered as a later
/// change's `before`. The bridge never runs here, so nothing is recorded, whatever the timing.
@Suite struct UnrecordedIdentityTests {
    let shared: SharedStore
    let source: EventSource
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
        shared = try SharedStore.create(in: directory)
        source = try EventSource(
            engine: try SyncEngine(connection: try Connection(path: shared.legacy.path), model: nil)
        )
    }

    /// Commits `body` on the legacy side and reads its events with values, as the live path does: each decoded.
    private func commit(_ body: (LegacySave) throws -> Void) throws -> [[String: Any]] {
        let token = try #require(try shared.legacy.save(SaveMetadata(author: "old-app"), body).token)
        let transaction = try #require(try source.transactions(after: token - 1, through: token, limit: 1).first)
        return try source.events(transaction, values: true, remembering: true).map { event in
            let line = try #require(event.withValues)
            return try #require(try JSONSerialization.jsonObject(with: Data(line.array)) as? [String: Any])
        }
    }

    /// The event of `object` among `events`.
    private static func event(of object: ObjectID, in events: [[String: Any]]) throws -> [String: Any] {
        try #require(
            events.first { $0["entity"] as? String == object.entity && $0["pk"] as? Int == Int(object.pk) },
            "no event of \(object): \(events)"
        )
    }

    private static func text(_ bytes: [UInt8]) -> String { UUIDText.text(bytes) ?? "" }

    @Test func aTargetNamedByItsAttributeIsNeverRemembered() throws {
        let (category1, category2) = (UUIDText.randomBytes(), UUIDText.randomBytes())
        let (task1, task2) = (UUIDText.randomBytes(), UUIDText.randomBytes())
        var category = ObjectID(entity: "Category", pk: 0)
        var task = ObjectID(entity: "Task", pk: 0)
        let created = try commit { save in
            category = try save.insert("Category", ["id": .uuid(category1), "name": .string("Home")])
            task = try save.insert("Task", ["id": .uuid(task1), "title": .string("a"), "createdAt": .date(0)])
            try save.setToOne(task, "category", category)
        }
        let values = try Self.event(of: task, in: created)["values"] as? [String: Any]
        #expect(values?["category"] as? String == Self.text(category1), "sent as it is now: \(created)")
        let members = try Self.event(of: category, in: created)["values"] as? [String: Any]
        #expect(members?["tasks"] as? [String] == [Self.text(task1)], "sent as it is now: \(created)")

        // Both identities change: the task's category and the category's task are named otherwise now, on no
        // change of the object naming them.
        _ = try commit { save in
            try save.update(category, ["id": .uuid(category2)])
            try save.update(task, ["id": .uuid(task2)])
        }

        // Deleting the category clears the task's: neither before names what was sent at first.
        let deleted = try commit { save in try save.delete(category) }
        let taskBefore = try Self.event(of: task, in: deleted)["before"] as? [String: Any]
        let named = taskBefore?["category"] as? String
        #expect(named == nil || named == Self.text(category2), "never the stale identity: \(deleted)")
        let categoryBefore = try Self.event(of: category, in: deleted)["before"] as? [String: Any]
        let listed = categoryBefore?["tasks"] as? [String]
        #expect(listed == nil || listed == [Self.text(task2)], "never the stale identity: \(deleted)")
    }
}
