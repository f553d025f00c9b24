import CoexistCoreData
import CoexistSQLite
import Foundation
import TestSupport
import Testing

/// Setting one side of a relationship shows on the other side at once, before the save, as Core Data
/// maintains inverses; the save writes the same; rollback restores both sides.
@Suite struct InverseMaintenanceTests {
    let directory: TemporaryDirectory
    let path: String

    init() throws {
        directory = try TemporaryDirectory()
        path = try DemoStore.create(in: directory).path
    }

    func pk(_ object: ManagedObject) -> Int64 {
        Int64(object.objectID.uriRepresentation().lastPathComponent.dropFirst()) ?? -1
    }

    @Test func eachSideShowsTheOtherBeforeTheSave() throws {
        let context = try DemoContexts.context(path)
        let errands = try DemoContexts.seed(context, count: 2)
        let tasks = errands.tasks.compactMap { $0 as? CDTask }.sorted { ($0.title ?? "") < ($1.title ?? "") }
        let home = CDCategory(context: context)
        home.name = "Home"
        home.setValue(UUID(), forKey: "id")

        // The to-one side: a task moves to Home, and leaves Errands.
        tasks[0].category = home
        #expect(home.tasks == [tasks[0]])
        #expect(errands.tasks == [tasks[1]])
        // The to-many side: Home takes the other task too; Errands is left with none.
        home.setValue(Set<ManagedObject>([tasks[0], tasks[1]]), forKey: "tasks")
        #expect(tasks[1].category === home)
        #expect(errands.tasks.isEmpty)
        // And lets go of the first, which then belongs to no category.
        home.setValue(Set<ManagedObject>([tasks[1]]), forKey: "tasks")
        #expect(tasks[0].category == nil)
        #expect(errands.hasChanges && home.hasChanges)

        try context.save()
        let stored = try RawSQLite.rows(path, "SELECT Z_PK, ZCATEGORY FROM ZTASK ORDER BY Z_PK")
        let byKey = Dictionary(uniqueKeysWithValues: stored.map { ($0[0].integerValue ?? 0, $0[1].integerValue) })
        #expect(byKey[pk(tasks[0])] == .some(nil))
        #expect(byKey[pk(tasks[1])] == pk(home))
        #expect(home.tasks == [tasks[1]] && errands.tasks.isEmpty)

        // Rollback restores both sides.
        tasks[1].category = errands
        #expect(errands.tasks == [tasks[1]] && home.tasks.isEmpty)
        context.rollback()
        #expect(tasks[1].category === home && home.tasks == [tasks[1]] && errands.tasks.isEmpty)
        #expect(!context.hasChanges)
    }

    /// An object deleted in the context is held by nothing: the other side reads nil and the save clears the
    /// link (it used to fail on an object with no identity, at every later save).
    @Test func deletingAnInsertedOwnerReleasesWhatItHeld() throws {
        let context = try DemoContexts.context(path)
        let task = try #require(try DemoContexts.seed(context, count: 1).tasks.first as? CDTask)
        let folder = CDCategory(context: context)
        folder.name = "Folder"
        folder.setValue(UUID(), forKey: "id")
        folder.setValue(Set<ManagedObject>([task]), forKey: "tasks")
        #expect(task.category === folder)
        context.delete(folder)
        #expect(task.category == nil)
        try context.save()
        #expect(try RawSQLite.rows(path, "SELECT ZCATEGORY FROM ZTASK WHERE Z_PK = \(pk(task))")[0][0] == .null)
        #expect(!context.hasChanges)
    }

    /// Letting go of an object another writer deleted does not block the change or the save.
    @Test func aMemberDeletedElsewhereDoesNotBlockTheChange() throws {
        let context = try DemoContexts.context(path)
        let errands = try DemoContexts.seed(context, count: 2)
        let tasks = errands.tasks.compactMap { $0 as? CDTask }.sorted { ($0.title ?? "") < ($1.title ?? "") }
        context.refreshAllObjects()
        let other = try DemoContexts.context(path, author: "other")
        other.delete(try other.existingObject(with: tasks[0].objectID))
        try other.save()
        errands.setValue(Set<ManagedObject>([tasks[1]]), forKey: "tasks")
        context.mergePolicy = .objectWins
        try context.save()
        #expect(try RawSQLite.rows(path, "SELECT count(*) FROM ZTASK")[0][0] == .integer(1))
        #expect(tasks[1].category === errands)
    }
}
