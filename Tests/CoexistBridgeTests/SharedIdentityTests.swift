import CoexistBridge
import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import CoexistStore
import TestSupport
import Testing

/// Core Data allows two objects with the same UUID `id`; the new schema keys objects by it. The bridge never
/// merges them into one row: the later one is parked with the reason, `verify` names it, and it mirrors once
/// its id is unique.
@Suite struct SharedIdentityTests {
    let old = SaveMetadata(author: "old-app")

    /// 600 legacy tasks with 447 distinct ids: 447 rows, 153 parked objects, and verify lists exactly them.
    @Test func duplicatesAreParkedNotMerged() throws {
        let directory = try TemporaryDirectory()
        let shared = try SharedStore.create(in: directory)
        try shared.legacy.save(old) { save in
            for index in 0..<600 {
                let number = index < 447 ? index : index - 447
                let id: [UInt8] = [UInt8(number >> 8), UInt8(number & 0xFF)] + [UInt8](repeating: 7, count: 14)
                _ = try save.insert(
                    "Task",
                    ["id": .uuid(id), "title": .string("task \(index)"), "createdAt": .date(Double(index))]
                )
            }
        }
        let bridge = try SyncEngine(connection: try Connection(path: shared.legacy.path), model: nil)
        try bridge.initialSyncIfNeeded()
        _ = try bridge.catchUp()
        let connection = bridge.connection
        #expect(try connection.scalar("SELECT count(*) FROM task") == .integer(447))
        #expect(try connection.scalar("SELECT count(*) FROM coexist_parked_object") == .integer(153))
        #expect(try bridge.parkedCount() == 153)
        // The first object with an id keeps it; titles are never overwritten by a duplicate's.
        #expect(try connection.scalar("SELECT count(*) FROM task WHERE title IN ('task 0', 'task 446')") == .integer(2))
        #expect(try connection.scalar("SELECT count(*) FROM task WHERE title = 'task 447'") == .integer(0))
        // Retrying while they still share their ids mirrors nothing, writes no history, says nothing again;
        // in turns of 64, every one is tried.
        let transactions = try connection.scalar("SELECT count(*) FROM ATRANSACTION")
        var reports = 0
        bridge.report = { _ in reports += 1 }
        for _ in 0..<3 {
            let retry = try bridge.retryParked()
            #expect(retry.mirrored == 0 && retry.retried > 0, "\(retry)")
        }
        #expect(try connection.scalar("SELECT count(*) FROM ATRANSACTION") == transactions)
        #expect(reports == 0)
        #expect(try bridge.parkedCount() == 153)
        let report = try Verifier(engine: bridge).run()
        #expect(report.differenceCount == 153)
        #expect(report.differences.allSatisfy { $0.contains("parked: its id") }, "\(report.differences.prefix(3))")

        // A duplicate given a unique id mirrors and leaves the parked table.
        let duplicate = ObjectID(entity: "Task", pk: 448)
        #expect(try shared.legacy.object(duplicate)?.attributes["title"] == .string("task 447"))
        try shared.legacy.save(old) { save in
            try save.update(duplicate, ["id": .uuid([UInt8](repeating: 9, count: 16))])
        }
        _ = try bridge.catchUp()
        #expect(try connection.scalar("SELECT count(*) FROM task WHERE title = 'task 447'") == .integer(1))
        #expect(try bridge.parkedCount() == 152)
        #expect(try Verifier(engine: bridge).run().differenceCount == 152)
    }

    /// A duplicate inserted while the bridge follows the history: parked, and the rest of its transaction
    /// is mirrored.
    @Test func aDuplicateInALiveTransactionParksOnlyItself() throws {
        let directory = try TemporaryDirectory()
        let shared = try SharedStore.create(in: directory)
        let bridge = try SyncEngine(connection: try Connection(path: shared.legacy.path), model: nil)
        try bridge.initialSyncIfNeeded()
        try shared.legacy.save(old) { save in
            _ = try save.insert("Task", ["id": DemoStore.uuid(1), "title": .string("first"), "createdAt": .date(0)])
        }
        try shared.legacy.save(old) { save in
            _ = try save.insert("Task", ["id": DemoStore.uuid(1), "title": .string("twin"), "createdAt": .date(0)])
            _ = try save.insert("Task", ["id": DemoStore.uuid(2), "title": .string("other"), "createdAt": .date(0)])
        }
        let result = try bridge.catchUp()
        #expect(result.parked == 0, "no transaction is parked")
        let titles = try bridge.connection.rows("SELECT title FROM task ORDER BY title").compactMap { $0[0].textValue }
        #expect(titles == ["first", "other"])
        #expect(try bridge.parkedCount() == 1)
    }

    /// Deleting the parked twin deletes nothing of the object whose id it shared (its tombstone names that
    /// id), and it leaves the parked table; deleting the original then lets nothing stay parked.
    @Test func deletingTheParkedTwinKeepsTheOriginal() throws {
        let directory = try TemporaryDirectory()
        let shared = try SharedStore.create(in: directory)
        let bridge = try SyncEngine(connection: try Connection(path: shared.legacy.path), model: nil)
        try bridge.initialSyncIfNeeded()
        var first = ObjectID(entity: "Task", pk: 0)
        var twin = ObjectID(entity: "Task", pk: 0)
        try shared.legacy.save(old) { save in
            first = try save.insert(
                "Task",
                ["id": DemoStore.uuid(1), "title": .string("first"), "createdAt": .date(0)]
            )
        }
        try shared.legacy.save(old) { save in
            twin = try save.insert("Task", ["id": DemoStore.uuid(1), "title": .string("twin"), "createdAt": .date(0)])
        }
        _ = try bridge.catchUp()
        #expect(try bridge.parkedCount() == 1)
        try shared.legacy.save(old) { save in try save.delete(twin) }
        _ = try bridge.catchUp()
        let titles = try bridge.connection.rows("SELECT title FROM task").compactMap { $0[0].textValue }
        #expect(titles == ["first"], "the original's row is kept")
        #expect(try bridge.parkedCount() == 0, "the deleted twin is no longer parked")
        #expect(try Verifier(engine: bridge).run().equal)
        _ = first
    }

    /// A parked twin whose id becomes unique because the original is deleted mirrors on the next retry,
    /// though no save touches it.
    @Test func aTwinWhoseOriginalIsDeletedMirrorsOnRetry() throws {
        let directory = try TemporaryDirectory()
        let shared = try SharedStore.create(in: directory)
        let bridge = try SyncEngine(connection: try Connection(path: shared.legacy.path), model: nil)
        try bridge.initialSyncIfNeeded()
        var first = ObjectID(entity: "Task", pk: 0)
        try shared.legacy.save(old) { save in
            first = try save.insert(
                "Task",
                ["id": DemoStore.uuid(1), "title": .string("first"), "createdAt": .date(0)]
            )
        }
        try shared.legacy.save(old) { save in
            _ = try save.insert("Task", ["id": DemoStore.uuid(1), "title": .string("twin"), "createdAt": .date(0)])
        }
        _ = try bridge.catchUp()
        try shared.legacy.save(old) { save in try save.delete(first) }
        _ = try bridge.catchUp()
        #expect(try bridge.parkedCount() == 1, "nothing touched the twin")
        let retry = try bridge.retryParked()
        #expect(retry.mirrored == 1, "\(retry)")
        let titles = try bridge.connection.rows("SELECT title FROM task").compactMap { $0[0].textValue }
        #expect(titles == ["twin"])
        #expect(try bridge.parkedCount() == 0)
        #expect(try Verifier(engine: bridge).run().equal)
    }
}
