import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import TestSupport
import Testing

@Suite struct LegacySaveTests {
    let author = SaveMetadata(
        author: "tests",
        contextName: "main",
        bundleID: "org.coexist.tests",
        processName: "xctest"
    )

    /// Inserts, updates and deletes come back from history exactly: objects, types and changed properties.
    @Test func roundTripThroughHistory() throws {
        let directory = try TemporaryDirectory()
        let store = try DemoStore.create(in: directory)
        var work = ObjectID(entity: "Category", pk: 0)
        var tasks: [ObjectID] = []
        let first = try store.save(author, timestamp: 100) { save in
            work = try save.insert("Category", ["id": DemoStore.uuid(1), "name": .string("Work")])
            for index in 0..<3 {
                let task = try save.insert(
                    "Task",
                    [
                        "id": DemoStore.uuid(UInt8(10 + index)), "title": .string("task \(index)"),
                        "createdAt": .date(1_000),
                    ]
                )
                try save.setToOne(task, "category", work)
                tasks.append(task)
            }
        }
        #expect(first.token == 1)
        #expect(first.changes.map(\.type) == [.insert, .insert, .insert, .insert])
        let second = try store.save(author, timestamp: 200) { save in
            try save.update(tasks[0], ["title": .string("renamed"), "priority": .integer(3)])
            try save.update(tasks[1], ["isCompleted": .boolean(true)], expectedVersion: 1)
            try save.delete(tasks[2])
        }
        #expect(second.token == 2)
        let reader = try HistoryReader(store: store)
        let history = try reader.transactions(after: 0)
        #expect(history.map(\.token) == [1, 2])
        #expect(history[0].author == "tests" && history[0].contextName == "main")
        #expect(history[0].bundleID == "org.coexist.tests" && history[0].processName == "xctest")
        #expect(history[0].timestamp == 100)
        let changes = history[1].changes.map { ($0.entity ?? "", $0.objectPK, $0.type, $0.properties ?? []) }
        // Objects are listed in the order the save first touched them: deleting a task first nullifies it
        // out of its category's tasks.
        #expect(changes.map(\.0) == ["Task", "Task", "Category", "Task"])
        #expect(changes.map(\.1) == [tasks[0].pk, tasks[1].pk, work.pk, tasks[2].pk])
        #expect(changes.map(\.2) == [.update, .update, .update, .delete])
        #expect(Set(changes[0].3) == ["title", "priority"])
        #expect(changes[1].3 == ["isCompleted"])
        #expect(changes[2].3 == ["tasks"])
        #expect(history[1].changes[3].tombstone == ["id": DemoStore.uuid(12)])
        #expect(try store.object(tasks[0])?.version == 2)
        #expect(try store.object(tasks[0])?.attributes["title"] == .string("renamed"))
        #expect(try store.object(work)?.version == 2)
        #expect(try store.related(work, "tasks") == [tasks[0], tasks[1]])
        #expect(try store.connection.scalar("PRAGMA integrity_check") == .text("ok"))
        #expect(try store.connection.rows("PRAGMA foreign_key_check").isEmpty)
        let keys = try store.connection.rows("SELECT Z_ENT, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT").map {
            $0.map(\.integerValue)
        }
        #expect(keys == [[1, 1], [2, 3], [16001, 8], [16002, 2], [16003, 4]])
    }

    /// An insert with a chosen `Z_PK` (a replay into a copy) takes any key no row holds, below the
    /// table's largest too; a key in use is refused; later keys come after the largest.
    @Test func insertWithAChosenKey() throws {
        let directory = try TemporaryDirectory()
        let store = try DemoStore.create(in: directory)
        try store.save(author) { save in
            for index in 0..<3 {
                _ = try save.insert("Category", ["id": DemoStore.uuid(UInt8(index)), "name": .string("c\(index)")])
            }
            try save.delete(ObjectID(entity: "Category", pk: 2))
        }
        try store.save(author) { save in
            _ = try save.insert("Category", ["id": DemoStore.uuid(20), "name": .string("again")], pk: 2)
        }
        #expect(try store.object(ObjectID(entity: "Category", pk: 2))?.attributes["name"] == .string("again"))
        #expect(throws: (any Error).self) {
            try store.save(author) { save in
                _ = try save.insert("Category", ["id": DemoStore.uuid(21), "name": .string("taken")], pk: 3)
            }
        }
        _ = try store.save(author) { save in
            try save.insert("Category", ["id": DemoStore.uuid(22), "name": .string("next")])
        }
        #expect(try store.objects(of: "Category").map(\.id.pk).sorted() == [1, 2, 3, 4])
    }

    @Test func defaultsAndMandatoryAttributes() throws {
        let directory = try TemporaryDirectory()
        let store = try DemoStore.create(in: directory)
        var task = ObjectID(entity: "Task", pk: 0)
        try store.save(author) { save in
            task = try save.insert("Task", ["id": DemoStore.uuid(1), "createdAt": .date(0)])
        }
        let object = try #require(try store.object(task))
        #expect(object.attributes["priority"] == .integer(0))
        #expect(object.attributes["notes"] == .string(""))
        #expect(object.attributes["isCompleted"] == .boolean(false))
        let missing = #expect(throws: LegacyStoreError.self) {
            try store.save(author) { save in try save.insert("Task", ["id": DemoStore.uuid(2)]) }
        }
        #expect(missing?.description.contains("mandatory attribute createdAt") == true)
        let range = #expect(throws: LegacyStoreError.self) {
            try store.save(author) { save in try save.update(task, ["priority": .integer(40_000)]) }
        }
        #expect(range?.description.contains("out of range") == true)
        #expect(try HistoryReader(store: store).transactions(after: 0).count == 1)
    }

    @Test func optimisticLockingRefusesStaleVersions() throws {
        let directory = try TemporaryDirectory()
        let store = try DemoStore.create(in: directory)
        var task = ObjectID(entity: "Task", pk: 0)
        try store.save(author) { save in
            task = try save.insert("Task", ["id": DemoStore.uuid(1), "createdAt": .date(0)])
        }
        try store.save(author) { save in try save.update(task, ["title": .string("a")], expectedVersion: 1) }
        let error = #expect(throws: LegacyStoreError.self) {
            try store.save(author) { save in try save.update(task, ["title": .string("b")], expectedVersion: 1) }
        }
        guard case .conflict(_, let object, let expected, let found) = error else {
            Issue.record("expected a conflict, got \(String(describing: error))")
            return
        }
        #expect(object == "Task/p1" && expected == 1 && found == 2)
        #expect(try store.object(task)?.attributes["title"] == .string("a"))
    }

    @Test func cascadeDeletesOwnedObjectsAndRecordsTombstones() throws {
        let directory = try TemporaryDirectory()
        let store = try DemoStore.create(in: directory)
        var category = ObjectID(entity: "Category", pk: 0)
        try store.save(author) { save in
            category = try save.insert("Category", ["id": DemoStore.uuid(1)])
            for index in 0..<2 {
                let task = try save.insert("Task", ["id": DemoStore.uuid(UInt8(5 + index)), "createdAt": .date(0)])
                try save.add(category, to: "tasks", [task])
            }
        }
        let result = try store.save(author) { save in try save.delete(category) }
        #expect(result.changes.map(\.type) == [.delete, .delete, .delete])
        #expect(
            Set(result.changes.compactMap { $0.tombstone["id"] }) == [
                DemoStore.uuid(1), DemoStore.uuid(5), DemoStore.uuid(6),
            ]
        )
        #expect(try store.objects(of: "Task").isEmpty)
        let raw = try store.connection.rows("SELECT ZTOMBSTONE0 FROM ACHANGE WHERE ZCHANGETYPE = 2 ORDER BY Z_PK")
        #expect(raw.count == 3)
        #expect(raw.allSatisfy { $0[0].blobValue?.count == 16 })
    }

    @Test func insertThenDeleteInOneSaveLeavesNoTrace() throws {
        let directory = try TemporaryDirectory()
        let store = try DemoStore.create(in: directory)
        let result = try store.save(author) { save in
            let task = try save.insert("Task", ["id": DemoStore.uuid(1), "createdAt": .date(0)])
            try save.delete(task)
        }
        #expect(result.token == nil)
        #expect(try store.connection.scalar("SELECT count(*) FROM ATRANSACTION") == .integer(0))
        // The key is still consumed: keys are never reused.
        #expect(try store.connection.scalar("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Task'") == .integer(1))
    }

    @Test func errorsRollTheWholeSaveBack() throws {
        let directory = try TemporaryDirectory()
        let store = try DemoStore.create(in: directory)
        #expect(throws: LegacyStoreError.self) {
            try store.save(author) { save in
                try save.insert("Category", ["id": DemoStore.uuid(1)])
                try save.insert("Nope")
            }
        }
        #expect(try store.objects(of: "Category").isEmpty)
        #expect(try store.connection.scalar("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Category'") == .integer(0))
    }
}
