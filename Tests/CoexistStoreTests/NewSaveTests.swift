import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import CoexistStore
import TestSupport
import Testing

@Suite struct NewSaveTests {
    let app = SaveMetadata(author: "new-app", contextName: "main")

    /// A save records what it set: an insert every attribute and relationship, an update the changed ones;
    /// a to-many beyond the listed limit as its count (its members never read), a smaller one as members.
    @Test func savesRecordWhatTheySet() throws {
        let directory = try TemporaryDirectory()
        let shared = try SharedStore.create(in: directory)
        var small = ObjectRef(entity: "Category", id: "")
        var large = ObjectRef(entity: "Category", id: "")
        var first = ObjectRef(entity: "Task", id: "")
        let inserted = try shared.new.save(app) { save in
            small = try save.insert("Category", ["name": .string("Small")])
            large = try save.insert("Category", ["name": .string("Large")])
            for index in 0...(RecordedValues.maxListedMembers + 1) {
                let task = try save.insert("Task", ["title": .string("t\(index)"), "createdAt": .date(0)])
                try save.setToOne(task, "category", index == 0 ? small : large)
                if index == 0 { first = task }
            }
        }
        let byObject = Dictionary(
            uniqueKeysWithValues: inserted.changes.compactMap { change in
                change.objectID.map { ($0, change.recordedValues) }
            }
        )
        #expect(byObject[small.id]??.members["tasks"] == [first.id])
        #expect(byObject[small.id]??.values["name"] == .string("Small"))
        #expect(byObject[large.id]??.counts["tasks"] == RecordedValues.maxListedMembers + 1)
        #expect(byObject[large.id]??.members["tasks"]?.count == nil)
        #expect(byObject[first.id]??.values["category"] == .string(small.id))
        #expect(byObject[first.id]??.values["title"] == .string("t0"))
        let updated = try shared.new.save(app) { save in try save.update(first, ["priority": .integer(3)]) }
        let values = try #require(updated.changes.first?.recordedValues)
        #expect(values.values == ["priority": .integer(3)])
        #expect(values.members.isEmpty && values.counts.isEmpty)
    }

    @Test func historyListsExactlyTheSavedChangesWithSharedTokens() throws {
        let directory = try TemporaryDirectory()
        let shared = try SharedStore.create(in: directory)
        // Legacy, new, legacy: one token sequence.
        let first = try shared.legacy.save(SaveMetadata(author: "old-app")) { save in
            try save.insert("Category", ["id": DemoStore.uuid(1), "name": .string("legacy")])
        }
        var work = ObjectRef(entity: "Category", id: "")
        var tasks: [ObjectRef] = []
        let second = try shared.new.save(app) { save in
            work = try save.insert("Category", ["name": .string("Work")])
            for index in 0..<3 {
                let task = try save.insert("Task", ["title": .string("t\(index)"), "createdAt": .date(Double(index))])
                try save.setToOne(task, "category", work)
                tasks.append(task)
            }
        }
        let third = try shared.new.save(app) { save in
            try save.update(tasks[0], ["title": .string("renamed"), "isCompleted": .boolean(true)])
            try save.delete(tasks[2])
        }
        let fourth = try shared.legacy.save(SaveMetadata(author: "old-app")) { save in
            try save.insert("Category", ["id": DemoStore.uuid(2), "name": .string("again")])
        }
        #expect([first.token, second.token, third.token, fourth.token] == [1, 2, 3, 4])
        let history = try HistoryReader(store: LegacyStore(path: shared.legacy.path)).transactions(after: 0)
        #expect(history.map(\.side) == [.legacy, .new, .new, .legacy])
        #expect(history[1].author == "new-app" && history[1].contextName == "main")
        #expect(history[1].changes.map(\.type) == [.insert, .insert, .insert, .insert])
        let changes = history[2].changes.map {
            "\($0.type) \($0.entity ?? "")/\($0.objectID ?? "") \($0.properties ?? [])"
        }
        #expect(
            changes == [
                "update Task/\(tasks[0].id) [\"isCompleted\", \"title\"]",
                "update Category/\(work.id) [\"tasks\"]",
                "delete Task/\(tasks[2].id) []",
            ]
        )
        #expect(history[2].changes[2].tombstone["id"] == .uuid(UUIDText.bytes(tasks[2].id) ?? []))
        // No ACHANGE rows for new-side saves: Core Data sees empty transactions there.
        #expect(
            try shared.legacy.connection.scalar("SELECT count(*) FROM ACHANGE WHERE ZTRANSACTIONID IN (2, 3)")
                == .integer(0)
        )
        #expect(try shared.new.related(work, "tasks") == [tasks[0], tasks[1]])
        #expect(try shared.new.values(of: tasks[0])?["title"] == .string("renamed"))
    }

    @Test func cascadeAndDenyAndValidation() throws {
        let directory = try TemporaryDirectory()
        let shared = try SharedStore.create(in: directory)
        var category = ObjectRef(entity: "Category", id: "")
        try shared.new.save(app) { save in
            category = try save.insert("Category", ["name": .string("c")])
            let task = try save.insert("Task", ["title": .string("t"), "createdAt": .date(0)])
            try save.add(category, to: "tasks", [task])
        }
        let result = try shared.new.save(app) { save in try save.delete(category) }
        #expect(result.changes.map(\.type) == [.delete, .delete])
        #expect(try shared.new.refs(of: "Task").isEmpty)
        let range = #expect(throws: StoreError.self) {
            try shared.new.save(app) { save in
                try save.insert("Task", ["title": .string("t"), "createdAt": .date(0), "priority": .integer(70_000)])
            }
        }
        #expect(range?.description.contains("priority") == true)
        let missing = #expect(throws: StoreError.self) {
            try shared.new.save(app) { save in try save.insert("Task", ["title": .string("t")]) }
        }
        #expect(missing?.description.contains("mandatory attribute createdAt") == true)
    }

    @Test func relationshipsOfTheLibraryModelInTheNewSchema() throws {
        let directory = try TemporaryDirectory()
        let legacy = try LibraryModel.createStore(in: directory)
        let store = try NewStore(path: legacy.path, model: try #require(legacy.model))
        try store.createSchema()
        var shelf = ObjectRef(entity: "Shelf", id: "")
        var books: [ObjectRef] = []
        var tags: [ObjectRef] = []
        try store.save(app) { save in
            shelf = try save.insert("Shelf", ["label": .string("A")])
            books = try (0..<3).map { try save.insert($0 == 1 ? "Comic" : "Book", ["title": .string("b\($0)")]) }
            tags = try ["x", "y"].map { try save.insert("Tag", ["name": .string($0)]) }
            try save.add(shelf, to: "books", books)
            try save.add(books[0], to: "tags", [tags[1], tags[0]])
            let cover = try save.insert("Cover", ["color": .string("red")])
            try save.setToOne(books[1], "cover", cover)
        }
        #expect(try store.related(shelf, "books") == books)
        try store.save(app) { save in try save.setOrdered(shelf, "books", books.reversed()) }
        #expect(try store.related(shelf, "books") == books.reversed())
        #expect(try store.related(books[0], "tags") == [tags[1], tags[0]])
        #expect(try store.related(tags[0], "books") == [books[0]])
        #expect(throws: StoreError.self) { try store.save(app) { save in try save.delete(shelf) } }
        let unique = #expect(throws: StoreError.self) {
            try store.save(app) { save in try save.insert("Tag", ["name": .string("x")]) }
        }
        #expect(unique?.description.contains("UNIQUE") == true)
        try store.save(app) { save in try save.delete(books[1]) }  // cascades to its cover
        #expect(try store.refs(of: "Cover").isEmpty)
    }

    /// An operation that fails inside a save is undone with its bookkeeping, and the save goes on: the
    /// history lists only what the save kept.
    @Test func aFailedOperationLeavesNoTraceInTheSave() throws {
        let directory = try TemporaryDirectory()
        let shared = try SharedStore.create(in: directory)
        var category = ObjectRef(entity: "Category", id: "")
        var task = ObjectRef(entity: "Task", id: "")
        try shared.new.save(app) { save in
            category = try save.insert("Category", ["name": .string("existing")])
            task = try save.insert("Task", ["title": .string("existing"), "createdAt": .date(1)])
        }
        var kept: [ObjectRef] = []
        var doomed = ObjectRef(entity: "Task", id: "")
        let result = try shared.new.save(app) { save in
            let first = try save.insert("Category", ["name": .string("first")])
            kept.append(first)
            #expect(throws: StoreError.self) { try save.insert("Category", id: first.id, ["name": .string("again")]) }
            // Links the existing task (recording updates of both), then fails on a missing one.
            let missing = ObjectRef(entity: "Task", id: UUIDText.random())
            #expect(throws: StoreError.self) { try save.add(category, to: "tasks", [task, missing]) }
            doomed = try save.insert("Task", ["title": .string("doomed"), "createdAt": .date(2)])
            try save.delete(doomed)  // a pending insert deleted: neither appears
            kept.append(try save.insert("Task", ["title": .string("kept"), "createdAt": .date(3)]))
        }
        let history = try HistoryReader(store: LegacyStore(path: shared.legacy.path)).transactions(after: 0)
        let transaction = try #require(history.first { $0.token == result.token })
        #expect(transaction.changes.map { "\($0.type) \($0.objectID ?? "")" } == kept.map { "insert \($0.id)" })
        #expect(try shared.new.related(category, "tasks").isEmpty)
        #expect(try shared.new.values(of: doomed) == nil)
    }
}
