import CoexistBridge
import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import CoexistStore
import TestSupport
import Testing

/// A snapshot's legacy inserts are copied set-based (one `INSERT … SELECT` per entity): the new side must be
/// what the object path writes — values, relationships to objects inserted in the same snapshot and to older
/// ones, the new side's history of the mirror — and a value the new side cannot hold must still park only
/// its transaction.
@Suite struct SetInsertTests {
    let old = SaveMetadata(author: "old-app")

    @Test func insertsOfASnapshotMirrorExactly() throws {
        let directory = try TemporaryDirectory()
        let shared = try SharedStore.create(in: directory)
        let bridge = try SyncEngine(connection: try Connection(path: shared.legacy.path), model: nil)
        try bridge.initialSyncIfNeeded()
        var home = ObjectID(entity: "Category", pk: 0)
        try shared.legacy.save(old) { save in
            home = try save.insert("Category", ["id": DemoStore.uuid(200), "name": .string("Home")])
        }
        _ = try bridge.catchUp()
        let before = try bridge.lastToken()
        for batch in 0..<3 {
            try shared.legacy.save(old) { save in
                let work = try save.insert(
                    "Category",
                    ["id": DemoStore.uuid(UInt8(201 + batch)), "name": .string("Work \(batch)")]
                )
                for index in 0..<100 {
                    let task = try save.insert(
                        "Task",
                        [
                            "id": .uuid(UUIDText.randomBytes()), "title": .string("task \(batch).\(index)"),
                            "createdAt": .date(Double(index) + 0.25), "priority": .integer(Int64(index % 7)),
                            "isCompleted": .boolean(index % 2 == 0), "notes": .string(index % 3 == 0 ? "" : "n"),
                        ]
                    )
                    if index % 3 == 1 { try save.setToOne(task, "category", work) }
                    if index % 3 == 2 { try save.setToOne(task, "category", home) }
                }
            }
        }
        let result = try bridge.catchUp()
        #expect(result.parked == 0)
        #expect(result.copied == 303, "every insert copied set-based")
        let report = try Verifier(engine: bridge).run()
        #expect(report.equal, "\(report.differences.prefix(5))")
        let connection = bridge.connection
        #expect(try connection.scalar("SELECT count(*) FROM task") == .integer(300))
        #expect(try connection.scalar("SELECT count(*) FROM task WHERE category_id IS NOT NULL") == .integer(198))
        // The mirror's history: one insert change per object, as for any save of the new side.
        let mirrored = try HistoryReader(connection: connection, decoder: StoreChangeDecoder(store: bridge.legacy))
            .transactions(after: before, limit: 100)
            .filter { $0.author == "coexistd" }
        let inserts = mirrored.flatMap(\.changes).filter { $0.type == .insert && $0.side == .new }
        #expect(inserts.count == 303, "\(mirrored.map(\.changes.count))")
        #expect(Set(inserts.compactMap(\.objectID)).count == 303)
    }

    @Test func aValueTheNewSideCannotHoldParksItsTransactionOnly() throws {
        let directory = try TemporaryDirectory()
        let shared = try SharedStore.create(in: directory)
        let bridge = try SyncEngine(connection: try Connection(path: shared.legacy.path), model: nil)
        try bridge.initialSyncIfNeeded()
        var bad = ObjectID(entity: "Task", pk: 0)
        try shared.legacy.save(old) { save in
            bad = try save.insert("Task", ["id": DemoStore.uuid(1), "title": .string("bad"), "createdAt": .date(0)])
        }
        // Beyond Integer 16: as a damaged or foreign writer could leave it.
        try shared.legacy.connection.run("UPDATE ZTASK SET ZPRIORITY = 100000 WHERE Z_PK = ?", [.integer(bad.pk)])
        try shared.legacy.save(old) { save in
            _ = try save.insert("Task", ["id": DemoStore.uuid(2), "title": .string("good"), "createdAt": .date(0)])
        }
        let result = try bridge.catchUp()
        #expect(result.parked == 1)
        #expect(result.copied == 0, "one transaction at a time, after the snapshot failed: the object path")
        let titles = try bridge.connection.rows("SELECT title FROM task").compactMap { $0[0].textValue }
        #expect(titles == ["good"])
        let reason = try bridge.oldestParked() ?? ""
        #expect(reason.contains("priority") && reason.contains("16 bits"), "\(reason)")
    }

    /// A legacy insert pointing at an object the new side deleted meanwhile (both pending in one pass): the
    /// new row gets no dangling reference (the pass's COMMIT would fail on the deferred foreign key, and
    /// fail again on every retry: measured, coexistd stuck with lag 176), and the pass commits.
    @Test func anInsertPointingAtAnObjectDeletedOnTheNewSideCommits() throws {
        let directory = try TemporaryDirectory()
        let shared = try SharedStore.create(in: directory)
        let bridge = try SyncEngine(connection: try Connection(path: shared.legacy.path), model: nil)
        try bridge.initialSyncIfNeeded()
        var work = ObjectID(entity: "Category", pk: 0)
        try shared.legacy.save(old) { save in
            work = try save.insert("Category", ["id": DemoStore.uuid(9), "name": .string("Work")])
        }
        _ = try bridge.catchUp()
        let workID = try #require(DemoStore.uuid(9).uuidString)
        // The legacy insert first: its side is mirrored first in the pass, into a new side that has already
        // deleted the category.
        try shared.legacy.save(old) { save in
            let task = try save.insert(
                "Task",
                ["id": DemoStore.uuid(10), "title": .string("late"), "createdAt": .date(0)]
            )
            try save.setToOne(task, "category", work)
        }
        try shared.new.save(SaveMetadata(author: "new-app")) { save in
            try save.delete(ObjectRef(entity: "Category", id: workID))
        }
        let result = try bridge.catchUp()
        #expect(try bridge.cursor() == (try bridge.lastToken()), "\(result)")
        let rows = try bridge.connection.rows("SELECT title, category_id FROM task")
        #expect(rows.map { $0[0] } == [.text("late")])
        #expect(rows.first?[1] == .null)
    }
}
