import CoexistData
import CoexistHistory
import CoexistLegacyStore
import CoexistMigration
import CoexistModel
import CoexistSQLite
import CoexistStore
import Foundation
import TestSupport
import Testing

/// The migration guide's unit tests (TaskModelTests), ported to Linux on the new schema.
@Suite struct GuideTests {
    let directory: TemporaryDirectory
    let context: ModelContext

    init() throws {
        directory = try TemporaryDirectory()
        let shared = try SharedStore.create(in: directory)
        context = try ModelContext(shared.new, author: "guide-tests")
    }

    @Test func createTask() throws {
        let task = TaskRecord(title: "Test Task")
        context.insert(task)
        try context.save()
        let tasks = try context.fetch(FetchDescriptor<TaskRecord>())
        #expect(tasks.count == 1)
        #expect(tasks.first?.title == "Test Task")
    }

    @Test func taskCategoryRelationship() throws {
        let category = CategoryRecord(name: "Work", color: "blue")
        let task = TaskRecord(title: "Meeting", category: category)
        context.insert(category)
        context.insert(task)
        try context.save()
        #expect(task.category?.name == "Work")
        #expect(category.tasks.contains(task))
        // A fresh context reads the same graph back from the database.
        let other = try ModelContext(context.store)
        let fetched = try other.fetch(FetchDescriptor<CategoryRecord>())
        #expect(fetched.map(\.name) == ["Work"])
        #expect(fetched.first?.tasks.map(\.title) == ["Meeting"])
        #expect(fetched.first?.tasks.first?.category === fetched.first)
    }

    @Test func deleteCategoryCascade() throws {
        let category = CategoryRecord(name: "Personal")
        let task1 = TaskRecord(title: "Task 1", category: category)
        let task2 = TaskRecord(title: "Task 2", category: category)
        context.insert(category)
        context.insert(task1)
        context.insert(task2)
        try context.save()
        context.delete(category)
        try context.save()
        #expect(try context.fetch(FetchDescriptor<TaskRecord>()).count == 0)
        #expect(try context.fetchCount(FetchDescriptor<CategoryRecord>()) == 0)
    }

    /// A task deleted by its category's cascade in the same save as its own delete, or as an edit of it, is
    /// simply deleted: the save does not fail (it failed on every try, autosave included, until a rollback).
    @Test func aCascadeAndAnEditOrDeleteOfWhatItDeletesInOneSave() throws {
        for order in ["category first", "task first"] {
            for action in ["edit", "delete"] {
                let category = CategoryRecord(name: "Home \(order) \(action)")
                let task = TaskRecord(title: "Dishes", category: category)
                let other = TaskRecord(title: "Kept")
                // The order of the inserts is the order the context keeps its records in.
                if order == "category first" {
                    context.insert(category)
                    context.insert(task)
                } else {
                    context.insert(task)
                    context.insert(category)
                }
                context.insert(other)
                try context.save()
                if action == "edit" { task.title = "Dishes, now" } else { context.delete(task) }
                other.title = "Kept, edited"
                context.delete(category)
                try context.save()
                let left = try ModelContext(context.store).fetch(FetchDescriptor<TaskRecord>())
                #expect(left.map(\.title) == ["Kept, edited"], "\(order), \(action)")
                #expect(!context.hasChanges, "\(order), \(action)")
                context.delete(other)
                try context.save()
            }
        }
    }

    /// A new record given the identity of one the context holds does not take its place in the identity map:
    /// the save refuses the second record for one row, and once the new one is deleted the held one is still
    /// the context's record for that row (it had lost its entry, so a fetch made a third object).
    @Test func aNewRecordWithAHeldIdentityLeavesTheHeldOneInPlace() throws {
        context.insert(TaskRecord(title: "Original"))
        try context.save()
        let other = try ModelContext(context.store)
        let held = try #require(try other.fetch(FetchDescriptor<TaskRecord>()).first)
        let twin = TaskRecord(title: "Twin")
        twin.id = held.id
        other.insert(twin)
        #expect(throws: (any Error).self) { try other.save() }
        other.delete(twin)
        #expect(try other.fetch(FetchDescriptor<TaskRecord>()).first === held)
        held.title = "Edited"
        try other.save()
        #expect(try ModelContext(context.store).fetch(FetchDescriptor<TaskRecord>()).map(\.title) == ["Edited"])
        // The held one deleted and a new one of its identity inserted in one save: the new one is then the
        // context's record for the row.
        let successor = TaskRecord(title: "Successor")
        successor.id = held.id
        other.insert(successor)
        other.delete(held)
        try other.save()
        #expect(try other.fetch(FetchDescriptor<TaskRecord>()).first === successor)
        #expect(try ModelContext(context.store).fetch(FetchDescriptor<TaskRecord>()).map(\.title) == ["Successor"])
    }

    /// A new record reached only through a relationship of a held one (never inserted) is a change of the
    /// context: `hasChanges` says so, a merge of another process's commit keeps it, and the save inserts it
    /// (it was dropped from the relationship's state, so the merge read the category back without it).
    @Test func aNewRecordReachedThroughARelationshipIsAChange() throws {
        let category = CategoryRecord(name: "Work")
        context.insert(category)
        try context.save()
        #expect(!context.hasChanges)
        let task = TaskRecord(title: "Reached")
        category.tasks.append(task)
        #expect(context.hasChanges)
        let other = try ModelContext(context.store)
        other.insert(TaskRecord(title: "Elsewhere"))
        try other.save()
        _ = try context.mergeChangesFromStore()
        #expect(category.tasks.contains { $0 === task })
        try context.save()
        let fetched = try ModelContext(context.store).fetch(FetchDescriptor<CategoryRecord>())
        #expect(fetched.first?.tasks.map(\.title) == ["Reached"])
    }

    /// A record another process deleted leaves the relationships of the records still holding it, edited ones
    /// included (a merge does not read those again): the next save does not insert it again.
    @Test func aRecordDeletedElsewhereIsNotInsertedAgainThroughAnEditedHolder() throws {
        let category = CategoryRecord(name: "Work")
        let task = TaskRecord(title: "Gone", category: category)
        context.insert(category)
        context.insert(task)
        try context.save()
        category.name = "Work, renamed"
        let other = try ModelContext(context.store)
        other.delete(try #require(try other.fetch(FetchDescriptor<TaskRecord>()).first))
        try other.save()
        let changes = try context.mergeChangesFromStore()
        #expect(changes.flatMap(\.deleted).count == 1)
        #expect(category.tasks.isEmpty)
        #expect(context.hasChanges, "the rename is still to save")
        try context.save()
        let fresh = try ModelContext(context.store)
        #expect(try fresh.fetch(FetchDescriptor<TaskRecord>()).isEmpty)
        #expect(try fresh.fetch(FetchDescriptor<CategoryRecord>()).map(\.name) == ["Work, renamed"])
    }

    @Test func filteredFetch() throws {
        let task1 = TaskRecord(title: "Completed", isCompleted: true)
        let task2 = TaskRecord(title: "Pending", isCompleted: false)
        let task3 = TaskRecord(title: "Also Pending", isCompleted: false)
        [task1, task2, task3].forEach { context.insert($0) }
        try context.save()
        let descriptor = FetchDescriptor<TaskRecord>(predicate: #Predicate { !$0.isCompleted })
        #expect(try context.fetch(descriptor).count == 2)
        #expect(try context.fetchCount(descriptor) == 2)
    }

    @Test func sortedFetch() throws {
        let base = Date(timeIntervalSinceReferenceDate: 800_000_000)
        for (index, title) in ["b", "c", "a"].enumerated() {
            context.insert(TaskRecord(title: title, createdAt: base.addingTimeInterval(Double(index))))
        }
        try context.save()
        let newestFirst = try context.fetch(
            FetchDescriptor<TaskRecord>(sortBy: [SortDescriptor(\.createdAt, order: .reverse)])
        )
        #expect(newestFirst.map(\.title) == ["a", "c", "b"])
        let byTitle = try context.fetch(FetchDescriptor<TaskRecord>(sortBy: [SortDescriptor(\.title)], fetchLimit: 2))
        #expect(byTitle.map(\.title) == ["a", "b"])
        let paged = try context.fetch(
            FetchDescriptor<TaskRecord>(sortBy: [SortDescriptor(\.createdAt)], fetchLimit: 1, fetchOffset: 1)
        )
        #expect(paged.map(\.title) == ["c"])
    }

    @Test func propertyChangesAreSavedAndRecordedInHistory() throws {
        let task = TaskRecord(title: "draft")
        context.insert(task)
        try context.save()
        task.title = "final"
        task.priority = 2
        let token = try context.save()
        #expect(token != nil)
        #expect(try context.save() == nil)  // nothing left to save
        let reader = try HistoryReader(connection: context.store.connection, decoder: NoLegacyDecoder())
        let saved = try #require(token)
        let found = try reader.transaction(saved)
        let transaction = try #require(found)
        #expect(transaction.author == "guide-tests")
        #expect(transaction.changes.map(\.type) == [.update])
        #expect(transaction.changes.first?.properties == ["priority", "title"])
        task.priority = 70_000
        #expect(throws: StoreError.self) { try context.save() }  // an Integer 16 cannot hold it
    }
}

enum TaskSchemaV1: VersionedSchema {
    static let versionIdentifier = "1.0.0"
    static var models: [any PersistentModel.Type] { [] }
}

enum TaskSchemaV2: VersionedSchema {
    static let versionIdentifier = "2.0.0"
    static var models: [any PersistentModel.Type] { [TaskRecord.self, CategoryRecord.self] }
}

/// The app's VersionedSchema against the file's new schema: the same version opens, another is refused
/// naming both.
@Suite struct VersionedSchemaTests {
    @Test func aContextOpensOnlyOnItsVersion() throws {
        let directory = try TemporaryDirectory()
        let versions = try XCDataModelReader.readVersions(path: Fixtures.demoModel)
        let path = directory.file("Tasks.sqlite")
        _ = try StoreCreator.create(path: path, model: versions[0].model)
        let v1 = try NewStore(path: path, model: versions[0].model)
        try v1.createSchema()
        #expect(try v1.storedVersion() == ["1.0.0"])
        _ = try ModelContext(v1, schema: TaskSchemaV1.self)
        do {
            _ = try ModelContext(try NewStore(path: path, model: versions[1].model), schema: TaskSchemaV2.self)
            Issue.record("a V2 context opened a V1 file")
        } catch let error as StoreError {
            #expect(
                "\(error)".contains("is version 1.0.0; the app's schema is TaskSchemaV2 (version 2.0.0)"),
                "\(error)"
            )
        }
        _ = try Migrator.migrate(store: path, versions: versions)
        let v2 = try NewStore(path: path, model: versions[1].model)
        #expect(try v2.storedVersion() == ["2.0.0"])
        _ = try ModelContext(v2, schema: TaskSchemaV2.self)
        #expect(throws: StoreError.self) { try ModelContext(v2, schema: TaskSchemaV1.self) }
    }
}
