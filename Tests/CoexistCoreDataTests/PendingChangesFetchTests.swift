import CoexistCoreData
import CoexistSQLite
import Foundation
import TestSupport
import Testing

/// `includesPendingChanges` (Core Data's default): fetches, identity fetches and counts see the context's
/// unsaved inserts, changes and deletes, matched, sorted and windowed by the same SQL as saved objects.
@Suite struct PendingChangesFetchTests {
    private static func request(_ format: String, _ arguments: any PredicateArgument...) throws -> FetchRequest<CDTask>
    {
        let request = FetchRequest<CDTask>(entityName: "Task")
        request.predicate = try FetchPredicate(format: format, argumentArray: arguments)
        request.sortDescriptors = [FetchSortDescriptor(key: "priority", ascending: false)]
        return request
    }

    private static func insert(_ context: ManagedObjectContext, _ title: String, priority: Int16) -> CDTask {
        let task = CDTask(context: context)
        task.title = title
        task.priority = priority
        task.setValue(UUID(), forKey: "id")
        task.setValue(Date(timeIntervalSinceReferenceDate: 800_000_000), forKey: "createdAt")
        return task
    }

    @Test func insertedObjectsAreFoundBeforeTheyAreSaved() throws {
        let directory = try TemporaryDirectory()
        let store = try DemoStore.create(in: directory)
        let context = try DemoContexts.context(store.path)
        _ = try DemoContexts.seed(context, count: 5)  // saved: priorities 0…4
        // Find-or-create, as import code does: the object inserted earlier in the loop is found.
        let id = UUID()
        let created = Self.insert(context, "Imported", priority: 9)
        created.setValue(id, forKey: "id")
        let byID = try Self.request("id == %@", id)
        #expect(try context.fetch(byID) == [created])
        #expect(try context.count(for: byID) == 1)
        #expect(try context.fetchObjectIDs(byID) == [created.objectID])
        byID.includesPendingChanges = false
        #expect(try context.fetch(byID).isEmpty)
        #expect(try context.count(for: byID) == 0)

        // Sorted among the saved ones, and inside the window.
        let top = try Self.request("priority >= %@", 2)
        top.fetchLimit = 2
        #expect(try context.fetch(top).map(\.title) == ["Imported", "Task 4"])
        top.fetchOffset = 1
        #expect(try context.fetch(top).map(\.title) == ["Task 4", "Task 3"])
        let batched = try Self.request("priority >= %@", 2)
        batched.fetchBatchSize = 2
        #expect(try context.fetch(batched).map(\.title) == ["Imported", "Task 4", "Task 3", "Task 2"])
        // String functions see the unsaved value too.
        #expect(try context.fetch(try Self.request("title BEGINSWITH[cd] %@", "IMP")) == [created])
    }

    @Test func changedAndDeletedObjectsAreMatchedAsTheContextHoldsThem() throws {
        let directory = try TemporaryDirectory()
        let store = try DemoStore.create(in: directory)
        let writer = try DemoContexts.context(store.path)
        _ = try DemoContexts.seed(writer, count: 5)
        let context = try DemoContexts.context(store.path)
        let all = try Self.request("priority >= %@", 0)
        let tasks = try context.fetch(all)
        #expect(tasks.map(\.priority) == [4, 3, 2, 1, 0])
        // Task 4 no longer matches; Task 0 now comes first; Task 3 is deleted.
        tasks[0].priority = -1
        tasks[4].priority = 7
        context.delete(tasks[1])
        let top = try Self.request("priority >= %@", 1)
        #expect(try context.fetch(top).map(\.title) == ["Task 0", "Task 2", "Task 1"])
        #expect(try context.count(for: top) == 3)
        top.fetchLimit = 2
        #expect(try context.fetch(top).map(\.title) == ["Task 0", "Task 2"])
        // As saved: the stored order and values decide (objects are still returned as held).
        let saved = try Self.request("priority >= %@", 1)
        saved.includesPendingChanges = false
        #expect(try context.fetch(saved).map(\.title) == ["Task 4", "Task 2", "Task 1"])
        // A to-one set and not saved is matched through its saved target.
        let errands = try Self.request("category.name == %@", "Errands")
        let moved = Self.insert(context, "New errand", priority: 1)
        #expect(tasks[2].category != nil)
        moved.category = tasks[2].category
        #expect(try context.fetch(errands).contains(moved))
        tasks[2].category = nil
        #expect(try !context.fetch(errands).contains(tasks[2]))
        // Nothing was written.
        #expect(try writer.fetch(try Self.request("priority >= %@", 0)).count == 5)
    }

    /// A read-only context holds unsaved objects too (it cannot save them): its fetches see them, and the
    /// file is not written.
    @Test func aReadOnlyContextSeesItsUnsavedObjectsWithoutWriting() throws {
        let directory = try TemporaryDirectory()
        let seeded = try DemoStore.create(in: directory).path
        let seeder = try DemoContexts.context(seeded)
        _ = try DemoContexts.seed(seeder, count: 3)
        try Connection(path: seeded).execute("PRAGMA wal_checkpoint(TRUNCATE)")
        // A copy with no other connection open (no -wal beside it): the read-only context opens its own way.
        let path = directory.file("Copy.sqlite")
        try FileManager.default.copyItem(atPath: seeded, toPath: path)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let context = try ManagedObjectContext(storeAt: path, modelAt: Fixtures.demoModel, readOnly: true)
        context.register(CDTask.self)
        let created = Self.insert(context, "Draft", priority: 8)
        #expect(try context.fetch(try Self.request("priority >= %@", 1)).map(\.title) == ["Draft", "Task 2", "Task 1"])
        #expect(created.isInserted)
        // Deleted, unsaved: left out; still nothing written.
        let saved = try #require(try context.fetch(try Self.request("title == %@", "Task 2")).first)
        context.delete(saved)
        #expect(try context.fetch(try Self.request("priority >= %@", 1)).map(\.title) == ["Draft", "Task 1"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }
}
