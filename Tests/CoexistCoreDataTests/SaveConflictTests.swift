import CoexistCoreData
import CoexistSQLite
import Foundation
import TestSupport
import Testing

/// Saves meeting other writers' changes: what a merge policy decides never costs the context a change when
/// the save then fails; versions are checked for objects refreshed or deleted as faults; a failed read
/// never blocks a save; refusals name object and key.
@Suite struct SaveConflictTests {
    let directory: TemporaryDirectory
    let path: String

    init() throws {
        directory = try TemporaryDirectory()
        path = try DemoStore.create(in: directory).path
    }

    func context(_ author: String = "test") throws -> ManagedObjectContext {
        try DemoContexts.context(path, author: author)
    }

    func row(_ id: ManagedObjectID, _ columns: String, table: String = "ZTASK") throws -> [SQLiteValue] {
        let key = id.uriRepresentation().lastPathComponent.dropFirst()
        return try #require(try RawSQLite.rows(path, "SELECT \(columns) FROM \(table) WHERE Z_PK = \(key)").first)
    }

    /// Another context changes `id`'s title and saves.
    func retitleElsewhere(_ id: ManagedObjectID, _ title: String) throws {
        let other = try context("other")
        try other.existingObject(with: id).setValue(title, forKey: "title")
        try other.save()
    }

    @Test func aStoreWinsSaveThatFailsKeepsEveryChange() throws {
        let mine = try context()
        let task = try #require(try DemoContexts.seed(mine, count: 1).tasks.first as? CDTask)
        _ = task.title
        try retitleElsewhere(task.objectID, "Renamed elsewhere")
        mine.mergePolicy = .storeWins
        task.title = "Renamed here"
        task.setValue("noted here", forKey: "notes")
        // An insert without its mandatory values makes the save fail after the policy has run.
        let incomplete = CDTask(context: mine)
        incomplete.title = "No date"
        do {
            try mine.save()
            Issue.record("a task without createdAt was saved")
        } catch CoreDataError.validation(let object, let key, _) {
            #expect(object == "\(incomplete.objectID)")
            #expect(key == "createdAt")
        }
        #expect(Set(task.changedValues().keys) == ["title", "notes"])
        incomplete.setValue(Date(), forKey: "createdAt")
        incomplete.setValue(UUID(), forKey: "id")
        try mine.save()
        let stored = try row(task.objectID, "ZTITLE, ZNOTES")
        #expect(stored[0].textValue == "Renamed elsewhere" && stored[1].textValue == "noted here")
    }

    @Test func aToManySetWithoutReadingIsNotTakenAsChangedElsewhere() throws {
        let mine = try context()
        let category = try DemoContexts.seed(mine, count: 2)
        mine.refreshAllObjects()
        _ = category.name
        let other = try context("other")
        try other.existingObject(with: category.objectID).setValue("Home", forKey: "name")
        try other.save()
        mine.mergePolicy = .storeWins
        category.setValue(Set<ManagedObject>(), forKey: "tasks")
        try mine.save()
        #expect(try RawSQLite.rows(path, "SELECT count(*) FROM ZTASK WHERE ZCATEGORY IS NOT NULL")[0][0] == .integer(0))
        #expect(try row(category.objectID, "ZNAME", table: "ZCATEGORY")[0].textValue == "Home")
    }

    @Test func aRefreshedObjectIsCheckedAgainstTheVersionItRead() throws {
        let mine = try context()
        let task = try #require(try DemoContexts.seed(mine, count: 1).tasks.first as? CDTask)
        task.title = "Mine"
        mine.refresh(task, mergeChanges: true)
        #expect(task.title == "Mine")
        try retitleElsewhere(task.objectID, "Theirs")
        #expect(throws: CoreDataError.self) { try mine.save() }
        #expect(try row(task.objectID, "ZTITLE")[0].textValue == "Theirs")
    }

    @Test func aFaultDeletedIsCheckedAgainstTheVersionItHadThen() throws {
        let seeder = try context()
        let task = try #require(try DemoContexts.seed(seeder, count: 1).tasks.first)
        let taskID = task.objectID
        let mine = try context()
        mine.delete(mine.object(with: taskID))
        try retitleElsewhere(taskID, "Changed after the delete")
        let changed = conflicts { try mine.save() }
        #expect(changed.count == 1)
        #expect(changed.first?.cachedVersion == 1)
        #expect(changed.first?.persistedVersion == 2)
        // A fault whose row another writer deleted: a conflict naming no stored version.
        let gone = try context()
        let fault = gone.object(with: taskID)
        let other = try context("other")
        other.delete(try other.existingObject(with: taskID))
        try other.save()
        gone.delete(fault)
        let deleted = conflicts { try gone.save() }
        #expect(deleted.count == 1)
        #expect(deleted.first.map { $0.persistedVersion == nil } == true)
    }

    /// The conflicts a save fails with; none (and an issue recorded) when it fails otherwise or succeeds.
    func conflicts(_ save: () throws -> Int64?) -> [MergeConflict] {
        let error = #expect(throws: CoreDataError.self) { try save() }
        guard case .mergeConflict(let conflicts)? = error else {
            Issue.record("no merge conflict: \(String(describing: error))")
            return []
        }
        return conflicts
    }

    @Test func aFailedReadNeverBlocksASave() throws {
        let seeder = try context()
        let taskID = try #require(try DemoContexts.seed(seeder, count: 1).tasks.first?.objectID)
        let mine = try context()
        let fault = mine.object(with: taskID)
        let other = try context("other")
        other.delete(try other.existingObject(with: taskID))
        try other.save()
        #expect(fault.value(forKey: "title") == nil)
        guard case .objectNotFound? = fault.lastAccessError else {
            Issue.record("no objectNotFound: \(String(describing: fault.lastAccessError))")
            return
        }
        let category = CDCategory(context: mine)
        category.name = "After the failed read"
        category.setValue(UUID(), forKey: "id")
        #expect(try mine.save() != nil)
        #expect(fault.value(forKey: "nonexistent") == nil)
        #expect(fault.lastAccessError != nil)
        category.name = "Again"
        #expect(try mine.save() != nil)
    }

    /// A pending delete stays checked against the version read, also after a refresh.
    @Test func aRefreshedPendingDeleteIsStillChecked() throws {
        let seeder = try context()
        let taskID = try #require(try DemoContexts.seed(seeder, count: 1).tasks.first?.objectID)
        let mine = try context()
        mine.delete(try mine.existingObject(with: taskID))
        mine.refreshAllObjects()
        try retitleElsewhere(taskID, "Changed after the refresh")
        #expect(conflicts { try mine.save() }.count == 1)
        #expect(try row(taskID, "ZTITLE")[0].textValue == "Changed after the refresh")
    }
}
