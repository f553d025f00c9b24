import CoexistCoreData
import CoexistSQLite
import Foundation
import TestSupport
import Testing

/// Batch insert, update and delete requests: one save each, recorded in the history as Core Data records
/// them, all or nothing, and seen by held objects only through a merge.
@Suite struct BatchRequestTests {
    let directory: TemporaryDirectory
    let path: String

    init() throws {
        directory = try TemporaryDirectory()
        path = try DemoStore.create(in: directory).path
    }

    func count(_ sql: String) throws -> Int64 { try RawSQLite.rows(path, sql)[0][0].integerValue ?? -1 }

    func rows(_ count: Int) -> [[String: Any]] {
        (0..<count).map { index in
            [
                "id": UUID(), "title": "Task \(index)", "createdAt": Date(timeIntervalSinceReferenceDate: 8e8),
                "priority": Int16(index % 10), "notes": Optional("noted") as Any,
            ]
        }
    }

    @Test func batchInsertIsOneSaveAndAllOrNothing() throws {
        let context = try DemoContexts.context(path, author: "importer")
        let result = try context.execute(BatchInsertRequest(entityName: "Task", objects: rows(1_000)))
        #expect(result.count == 1_000)
        let token = try #require(result.token)
        #expect(try count("SELECT count(*) FROM ZTASK") == 1_000)
        #expect(try count("SELECT count(*) FROM ACHANGE WHERE ZTRANSACTIONID = \(token) AND ZCHANGETYPE = 0") == 1_000)
        #expect(try count("SELECT count(*) FROM ATRANSACTION") == 1)
        // Keys come from Z_MAX: a later insert gets the next one.
        let later = CDTask(context: context)
        later.title = "later"
        later.setValue(UUID(), forKey: "id")
        later.setValue(Date(), forKey: "createdAt")
        try context.save()
        #expect(try count("SELECT max(Z_PK) FROM ZTASK") == 1_001)

        let before = try directory.contents()
        var bad = rows(5)
        bad[3]["priority"] = "high"
        let typeError = #expect(throws: CoreDataError.self) {
            try context.execute(BatchInsertRequest(entityName: "Task", objects: bad))
        }
        #expect("\(typeError.map { "\($0)" } ?? "")".contains("Task[3].priority"))
        var missing = rows(5)
        missing[2]["createdAt"] = nil
        let mandatory = #expect(throws: CoreDataError.self) {
            try context.execute(BatchInsertRequest(entityName: "Task", objects: missing))
        }
        #expect("\(mandatory.map { "\($0)" } ?? "")".contains("Task[2]"))
        #expect(throws: CoreDataError.self) {
            try context.execute(BatchInsertRequest(entityName: "Task", objects: [["colour": "red"]]))
        }
        #expect(try directory.contents() == before)
    }

    @Test func batchUpdateBumpsVersionsAndHeldObjectsFollowOnMerge() throws {
        let context = try DemoContexts.context(path)
        let inserted = try context.execute(BatchInsertRequest(entityName: "Task", objects: rows(100)))
        let held = try #require(
            try context.fetch(FetchRequest<CDTask>(entityName: "Task")).first { $0.priority == 9 }
        )
        #expect(held.value(forKey: "isCompleted") as? Bool == false)
        var request = BatchUpdateRequest(entityName: "Task")
        request.predicate = try FetchPredicate(format: "priority >= %d", 5)
        request.propertiesToUpdate = ["isCompleted": true]
        let result = try context.execute(request)
        #expect(result.count == 50)
        #expect(try count("SELECT count(*) FROM ZTASK WHERE ZISCOMPLETED = 1 AND Z_OPT = 2") == 50)
        #expect(try count("SELECT count(*) FROM ZTASK WHERE ZISCOMPLETED = 0 AND Z_OPT = 1") == 50)
        // Not the context's own save: held objects show it after a merge, which names the batch's token.
        #expect(held.value(forKey: "isCompleted") as? Bool == false)
        let merged = try context.mergeChangesFromStore()
        #expect(merged.map(\.token) == [inserted.token, result.token])
        #expect(merged.last?.updated.count == 50 && merged.last?.updated.contains(held.objectID) == true)
        #expect(held.value(forKey: "isCompleted") as? Bool == true)
        guard case .transactions(let history) = try context.execute(.fetchHistory(after: (result.token ?? 1) - 1))
        else { return }
        #expect(history.first?.changes.allSatisfy { $0.updatedProperties == ["isCompleted"] } == true)
    }

    @Test func batchDeleteAppliesDeleteRules() throws {
        let context = try DemoContexts.context(path)
        let errands = try DemoContexts.seed(context, count: 3)
        let home = CDCategory(context: context)
        home.name = "Home"
        home.setValue(UUID(), forKey: "id")
        try context.save()
        let result = try context.execute(
            BatchDeleteRequest(entityName: "Category", predicate: try FetchPredicate(format: "name == %@", "Errands"))
        )
        #expect(result.objectIDs == [errands.objectID])
        // Cascade: its tasks went too, each with its tombstone.
        #expect(try count("SELECT count(*) FROM ZTASK") == 0)
        #expect(try count("SELECT count(*) FROM ZCATEGORY") == 1)
        let token = try #require(result.token)
        #expect(try count("SELECT count(*) FROM ACHANGE WHERE ZTRANSACTIONID = \(token) AND ZCHANGETYPE = 2") == 4)
        #expect(
            try context.execute(BatchDeleteRequest(entityName: "Category", predicate: FetchPredicate(value: false)))
                .token == nil
        )
    }
}
