import CoexistBridge
import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import CoexistStore
import TestSupport
import Testing

/// A delete that cascades records, for every object it deletes, the tombstone and the partners' updates a
/// direct delete records: the objects are deleted children first, so that none is gone (by the schema's
/// ON DELETE CASCADE) before its own delete reads it.
@Suite struct CascadeTombstoneTests {
    @Test func cascadedDeletesKeepTheirTombstones() throws {
        let directory = try TemporaryDirectory()
        let shared = try SharedStore.create(in: directory)
        var category = ObjectRef(entity: "Category", id: "")
        var tasks: [ObjectRef] = []
        _ = try shared.new.save(SaveMetadata(author: "new-app")) { save in
            category = try save.insert("Category", id: nil, ["name": .string("Home"), "color": .string("blue")])
            for index in 0..<3 {
                let task = try save.insert("Task", id: nil, ["title": .string("t\(index)"), "createdAt": .date(0)])
                try save.setToOne(task, "category", category)
                tasks.append(task)
            }
        }
        let deleted = try shared.new.save(SaveMetadata(author: "new-app")) { save in try save.delete(category) }
        let changes = deleted.changes
        #expect(changes.count == 4)
        for task in tasks {
            let change = try #require(changes.first { $0.objectID == task.id })
            #expect(change.type == .delete)
            #expect(change.tombstone["id"] == .uuid(UUIDText.bytes(task.id) ?? []), "\(change.tombstone)")
        }
    }

    /// A category with tasks deleted on either side is mirrored whole: the other side holds neither, and the
    /// two schemas agree.
    @Test func cascadedDeletesMirrorBothWays() throws {
        let directory = try TemporaryDirectory()
        let shared = try SharedStore.create(in: directory)
        let bridge = try SyncEngine(connection: try Connection(path: shared.legacy.path), model: nil)
        try bridge.initialSyncIfNeeded()
        // New side: a category and its tasks, mirrored, then deleted there.
        var category = ObjectRef(entity: "Category", id: "")
        _ = try shared.new.save(SaveMetadata(author: "new-app")) { save in
            category = try save.insert("Category", id: nil, ["name": .string("Home"), "color": .string("blue")])
            for index in 0..<3 {
                let task = try save.insert("Task", id: nil, ["title": .string("t\(index)"), "createdAt": .date(0)])
                try save.setToOne(task, "category", category)
            }
        }
        _ = try bridge.catchUp()
        #expect(try shared.legacy.objects(of: "Task").count == 3)
        _ = try shared.new.save(SaveMetadata(author: "new-app")) { save in try save.delete(category) }
        let mirrored = try bridge.catchUp()
        #expect(mirrored.parked == 0)
        #expect(try shared.legacy.objects(of: "Task").isEmpty && shared.legacy.objects(of: "Category").isEmpty)

        // Legacy side: the same, deleted there.
        let made = try shared.legacy.save(SaveMetadata(author: "old-app")) { save in
            let home = try save.insert(
                "Category",
                ["id": .uuid(UUIDText.randomBytes()), "name": .string("Work"), "color": .string("red")]
            )
            for index in 0..<3 {
                let task = try save.insert(
                    "Task",
                    ["id": .uuid(UUIDText.randomBytes()), "title": .string("l\(index)"), "createdAt": .date(0)]
                )
                try save.setToOne(task, "category", home)
            }
        }
        _ = try bridge.catchUp()
        let home = try #require(made.changes.first { $0.entity == "Category" }?.objectPK)
        _ = try shared.legacy.save(SaveMetadata(author: "old-app")) { save in
            try save.delete(ObjectID(entity: "Category", pk: home))
        }
        #expect(try bridge.catchUp().parked == 0)
        #expect(try shared.new.refs(of: "Task").isEmpty && shared.new.refs(of: "Category").isEmpty)
        #expect(try Verifier(engine: bridge).run().equal)
    }
}
