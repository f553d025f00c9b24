import CoexistCoreData
import CoexistSQLite
import Foundation
import TestSupport
import Testing

final class CDTask: ManagedObject {
    override class var entityName: String { "Task" }
    var title: String? {
        get { value(forKey: "title") as? String }
        set { setValue(newValue, forKey: "title") }
    }
    var priority: Int16 {
        get { value(forKey: "priority") as? Int16 ?? 0 }
        set { setValue(newValue, forKey: "priority") }
    }
    var category: CDCategory? {
        get { value(forKey: "category") as? CDCategory }
        set { setValue(newValue, forKey: "category") }
    }
}

final class CDCategory: ManagedObject {
    override class var entityName: String { "Category" }
    var name: String? {
        get { value(forKey: "name") as? String }
        set { setValue(newValue, forKey: "name") }
    }
    var tasks: Set<ManagedObject> { value(forKey: "tasks") as? Set<ManagedObject> ?? [] }
}

/// The Core Data-shaped context on a store of the demo model: saves, identities, merge policies, rollback,
/// batched fetches, delete rules, refusals.
@Suite struct ContextTests {
    let directory: TemporaryDirectory
    let path: String

    init() throws {
        directory = try TemporaryDirectory()
        path = try DemoStore.create(in: directory).path
    }

    func context(author: String = "test") throws -> ManagedObjectContext {
        try DemoContexts.context(path, author: author)
    }

    func seed(_ context: ManagedObjectContext, count: Int) throws -> CDCategory {
        try DemoContexts.seed(context, count: count)
    }

    @Test func saveThenAnotherContextReadsItAll() throws {
        let writer = try context(author: "legacy-app")
        let category = try seed(writer, count: 3)
        #expect(!category.objectID.isTemporaryID)
        #expect(!writer.hasChanges)
        let reader = try context()
        let request = FetchRequest<CDTask>(entityName: "Task")
        request.predicate = try FetchPredicate(format: "category.name == %@ AND priority >= 1", "Errands")
        request.sortDescriptors = [FetchSortDescriptor(key: "priority", ascending: false)]
        let tasks = try reader.fetch(request)
        #expect(tasks.map(\.title) == ["Task 2", "Task 1"])
        #expect(tasks.first?.category?.name == "Errands")
        #expect(tasks.first?.category?.tasks.count == 3)
        let uri = category.objectID.uriRepresentation()
        #expect(uri.absoluteString.hasPrefix("x-coredata://"))
        let resolved = try #require(reader.managedObjectID(forURIRepresentation: uri))
        #expect(try reader.existingObject(with: resolved) === tasks.first?.category)
        let authors = try RawSQLite.rows(
            path,
            "SELECT s.ZNAME FROM ATRANSACTION t JOIN ATRANSACTIONSTRING s ON s.Z_PK = t.ZAUTHORTS"
        ).compactMap { $0[0].textValue }
        #expect(authors == ["legacy-app"])
    }

    @Test func staleSaveIsAMergeConflictNamingObjectAndVersions() throws {
        let first = try context()
        let category = try seed(first, count: 1)
        let second = try context()
        let other = try second.existingObject(with: category.objectID)
        _ = category.name
        other.setValue("Home", forKey: "name")
        try second.save()
        category.name = "Work"
        do {
            try first.save()
            Issue.record("the stale save succeeded")
        } catch CoreDataError.mergeConflict(let conflicts) {
            #expect(conflicts.count == 1)
            #expect(conflicts.first?.objectID == category.objectID)
            #expect(conflicts.first?.cachedVersion == 1)
            #expect(conflicts.first?.persistedVersion == 2)
        }
        #expect(first.hasChanges)
        #expect(try RawSQLite.rows(path, "SELECT ZNAME FROM ZCATEGORY")[0][0].textValue == "Home")
    }

    @Test func mergePoliciesGiveTheirDocumentedResults() throws {
        for policy in [MergePolicy.objectWins, .storeWins] {
            let first = try context()
            let task = try #require(try seed(first, count: 1).tasks.first as? CDTask)
            _ = task.title
            let second = try context()
            let other = try second.existingObject(with: task.objectID)
            other.setValue("Renamed elsewhere", forKey: "title")
            other.setValue(Int16(7), forKey: "priority")
            try second.save()
            task.title = "Renamed here"
            task.setValue("noted here", forKey: "notes")
            first.mergePolicy = policy
            try first.save()
            let row = try RawSQLite.rows(
                path,
                "SELECT ZTITLE, ZPRIORITY, ZNOTES, Z_OPT FROM ZTASK WHERE Z_PK = \(task.objectID.uriRepresentation().lastPathComponent.dropFirst())"
            )[0]
            // Both: the property only the other writer changed keeps its value; the one only we changed is saved.
            #expect(row[1].integerValue == 7)
            #expect(row[2].textValue == "noted here")
            #expect(row[0].textValue == (policy == .objectWins ? "Renamed here" : "Renamed elsewhere"))
            #expect(row[3].integerValue == 3)
            #expect(task.title == row[0].textValue)
            // The object now holds the stored version: a further edit saves without a conflict.
            task.setValue("again", forKey: "notes")
            first.mergePolicy = .error
            try first.save()
            try RawSQLite.execute(path, "DELETE FROM ZTASK; DELETE FROM ZCATEGORY")
        }
    }

    @Test func rollbackRestoresEveryChange() throws {
        let context = try context()
        let category = try seed(context, count: 2)
        let tasks = category.tasks.compactMap { $0 as? CDTask }.sorted { ($0.title ?? "") < ($1.title ?? "") }
        tasks[0].title = "Changed"
        context.delete(tasks[1])
        let added = CDTask(context: context)
        added.title = "New"
        #expect(context.hasChanges)
        context.rollback()
        #expect(!context.hasChanges)
        #expect(tasks[0].title == "Task 0")
        #expect(!tasks[1].isDeleted)
        #expect(added.managedObjectContext == nil)
        #expect(try context.save() == nil)
        #expect(try context.count(for: FetchRequest<CDTask>(entityName: "Task")) == 2)
    }

    /// A fetch whose last row cannot be decoded fails and registers none of the objects of the rows before
    /// it; what the context held (a changed object among them) is kept as it was.
    @Test func aFailedFetchRegistersNothing() throws {
        _ = try seed(try context(), count: 4)
        let reader = try context()
        let first = FetchRequest<CDTask>(entityName: "Task")
        first.fetchLimit = 1
        let held = try #require(try reader.fetch(first).first)
        held.priority = 9
        let before = reader.registeredObjects
        try Connection(path: path).run("UPDATE ZTASK SET ZPRIORITY = 'high' WHERE Z_PK = (SELECT max(Z_PK) FROM ZTASK)")
        let other = try context()
        #expect(throws: CoreDataError.self) { try other.fetch(FetchRequest<CDTask>(entityName: "Task")) }
        #expect(other.registeredObjects.isEmpty)
        #expect(throws: CoreDataError.self) { try reader.fetch(FetchRequest<CDTask>(entityName: "Task")) }
        #expect(reader.registeredObjects == before)
        #expect(held.priority == 9 && reader.hasChanges)
        #expect(held.title == "Task 0")
    }

    /// A loaded object answers its stored attributes from what it read, without its context; once deleted
    /// and saved, or once its context is gone, it answers none.
    @Test func loadedObjectsAnswerOnlyWhileTheirContextHoldsThem() throws {
        _ = try seed(try context(), count: 2)
        var reader: ManagedObjectContext? = try context()
        let tasks = try #require(reader).fetch(FetchRequest<CDTask>(entityName: "Task"))
        #expect(tasks.map(\.title) == ["Task 0", "Task 1"])
        reader?.delete(tasks[1])
        #expect(tasks[1].title == "Task 1")
        try reader?.save()
        #expect(tasks[1].title == nil && tasks[1].managedObjectContext == nil)
        reader = nil
        #expect(tasks[0].managedObjectContext == nil && !tasks[0].isFault)
        #expect(tasks[0].title == nil)
        let other = try context()
        other.insert(tasks[0])
        #expect(tasks[0].managedObjectContext == nil && !other.hasChanges)
    }

    @Test func batchedFetchLoadsABatchAtATime() throws {
        _ = try seed(try context(), count: 25)
        let reader = try context()
        let request = FetchRequest<CDTask>(entityName: "Task")
        request.fetchBatchSize = 10
        request.sortDescriptors = [FetchSortDescriptor(key: "priority")]
        let tasks = try reader.fetch(request)
        #expect(tasks.count == 25)
        #expect(tasks.allSatisfy { $0.isFault })
        #expect(tasks[12].title == "Task 12")
        #expect(tasks[10...19].allSatisfy { !$0.isFault })
        #expect(tasks[0..<10].allSatisfy { $0.isFault } && tasks[20...].allSatisfy { $0.isFault })
    }

    @Test func deleteRulesCascadeAndHeldObjectsFollow() throws {
        let context = try context()
        let category = try seed(context, count: 2)
        let tasks = category.tasks
        context.delete(category)
        try context.save()
        #expect(tasks.allSatisfy { $0.isDeleted })
        #expect(try RawSQLite.rows(path, "SELECT count(*) FROM ZTASK")[0][0].integerValue == 0)
        let changes = try RawSQLite.rows(path, "SELECT count(*) FROM ACHANGE WHERE ZCHANGETYPE = 2")[0][0].integerValue
        #expect(changes == 3)
    }

    /// A task deleted by its category's cascade in the same save as its own delete, or as an edit of it, is
    /// simply deleted, whichever of the two deletes came first.
    @Test func aCascadeAndAnEditOrDeleteOfWhatItDeletesInOneSave() throws {
        let context = try context()
        for (action, categoryFirst) in [("edit", true), ("delete", true), ("delete", false)] {
            let category = try seed(context, count: 2)
            let task = try #require(category.tasks.first)
            if action == "edit" { task.setValue("Edited", forKey: "title") }
            if categoryFirst { context.delete(category) }
            if action == "delete" { context.delete(task) }
            if !categoryFirst { context.delete(category) }
            try context.save()
            #expect(task.isDeleted, "\(action)")
            #expect(try RawSQLite.rows(path, "SELECT count(*) FROM ZTASK")[0][0].integerValue == 0, "\(action)")
            #expect(!context.hasChanges, "\(action)")
        }
    }

    /// An object inserted into a category deleted in the same save goes with the category's cascade: it is
    /// deleted, not left in the context as a saved object with no row.
    @Test func anInsertACascadeTakesInTheSameSaveIsDeleted() throws {
        let context = try context()
        let category = try seed(context, count: 1)
        let task = CDTask(context: context)
        task.title = "Added"
        task.setValue(UUID(), forKey: "id")
        task.setValue(Date(timeIntervalSinceReferenceDate: 800_000_000), forKey: "createdAt")
        task.category = category
        context.delete(category)
        try context.save()
        #expect(task.isDeleted)
        #expect(task.managedObjectContext == nil)
        #expect(try RawSQLite.rows(path, "SELECT count(*) FROM ZTASK")[0][0].integerValue == 0)
        #expect(!context.hasChanges)
    }

    /// A Deny rule counts the objects the same save deletes, whatever order the context deleted them in: a
    /// shelf (books: Deny) deleted with its books saves either way (it failed when the shelf came first).
    @Test func denyCountsWhatTheSameSaveDeletes() throws {
        for shelfFirst in [true, false] {
            let library = try TemporaryDirectory()
            let store = try LibraryModel.createStore(in: library)
            let model = library.file("Library.contents")
            let seeding = try ManagedObjectContext(storeAt: store.path, modelAt: model)
            let seeded = seeding.insertNewObject(forEntityName: "Shelf")
            seeded.setValue("A", forKey: "label")
            seeded.setValue(
                (0..<2).map { index in
                    let book = seeding.insertNewObject(forEntityName: "Book")
                    book.setValue("b\(index)", forKey: "title")
                    return book
                },
                forKey: "books"
            )
            try seeding.save()
            let context = try ManagedObjectContext(storeAt: store.path, modelAt: model)
            let shelf = try #require(try context.fetch(FetchRequest<ManagedObject>(entityName: "Shelf")).first)
            let books = try context.fetch(FetchRequest<ManagedObject>(entityName: "Book"))
            #expect(books.count == 2)
            if shelfFirst { context.delete(shelf) }
            for book in books { context.delete(book) }
            if !shelfFirst { context.delete(shelf) }
            try context.save()
            #expect(try RawSQLite.rows(store.path, "SELECT count(*) FROM ZSHELF")[0][0].integerValue == 0)
            #expect(try RawSQLite.rows(store.path, "SELECT count(*) FROM ZBOOK")[0][0].integerValue == 0)
        }
    }

    /// A transient attribute (CoreDataPlus's `Car.currentDrivingSpeed`) holds its value in memory and is
    /// never written: a save with one set goes through (it failed on every try, the store having no column
    /// for it), and the value stays on the object after the save, as in Core Data.
    @Test func transientAttributesStayInMemory() throws {
        let copy = try directory.copy(Fixtures.sampleModelV2)
        // The app's model (the store's model cache leaves transient properties out).
        let context = try ManagedObjectContext(storeAt: copy, modelAt: Fixtures.sampleModelXcdatamodeld)
        let car = try #require(try context.fetch(FetchRequest<ManagedObject>(entityName: "Car")).first)
        #expect(car.value(forKey: "currentDrivingSpeed") as? Int64 == 0, "its default")
        car.setValue(Int64(88), forKey: "currentDrivingSpeed")
        car.setValue("Delorean", forKey: "model")
        try context.save()
        #expect(car.value(forKey: "currentDrivingSpeed") as? Int64 == 88)
        car.setValue(Int64(42), forKey: "currentDrivingSpeed")
        try context.save()
        let reader = try ManagedObjectContext(storeAt: copy, modelAt: Fixtures.sampleModelXcdatamodeld, readOnly: true)
        let request = FetchRequest<ManagedObject>(entityName: "Car")
        request.predicate = try FetchPredicate(format: "model == %@", "Delorean")
        let stored = try reader.fetch(request)
        #expect(stored.count == 1)
        #expect(stored.first?.value(forKey: "currentDrivingSpeed") as? Int64 == 0, "never written")
        // A value refused when set fails the save, also when it is the only change (it was silently ignored).
        car.setValue(42, forKey: "model")
        #expect(throws: CoreDataError.self) { try context.save() }
        context.rollback()
        #expect(try context.save() == nil)
    }

    @Test func wrongValuesAndReadOnlyAreRefusedAndWriteNothing() throws {
        let context = try context()
        _ = try seed(context, count: 1)
        let before = try directory.contents()
        let task = CDTask(context: context)
        task.setValue(42, forKey: "title")
        #expect(throws: CoreDataError.self) { try context.save() }
        context.rollback()
        let bad = CDTask(context: context)
        bad.setValue("x", forKey: "colour")
        #expect(throws: CoreDataError.self) { try context.save() }
        context.rollback()
        let huge = CDTask(context: context)
        huge.setValue(70_000, forKey: "priority")
        #expect(throws: CoreDataError.self) { try context.save() }
        #expect(try directory.contents() == before)
        let reader = try ManagedObjectContext(storeAt: path, modelAt: Fixtures.demoModel, readOnly: true)
        reader.insertNewObject(forEntityName: "Category").setValue("x", forKey: "name")
        #expect(throws: CoreDataError.self) { try reader.save() }
    }

    @Test func caseAndDiacriticInsensitiveComparisons() throws {
        let context = try context()
        let category = CDCategory(context: context)
        category.name = "Crème Brûlée"
        category.setValue(UUID(), forKey: "id")
        try context.save()
        for (format, expected) in [
            ("name ==[cd] 'creme brulee'", 1), ("name ==[c] 'creme brulee'", 0), ("name ==[d] 'Creme Brulee'", 1),
            ("name BEGINSWITH[cd] 'CRE'", 1), ("name CONTAINS[d] 'rule'", 1), ("name LIKE[cd] 'creme*'", 1),
            ("name MATCHES[cd] 'creme.*'", 1), ("name == 'creme brulee'", 0),
        ] {
            let request = FetchRequest<CDCategory>(entityName: "Category")
            request.predicate = try FetchPredicate(format: format)
            #expect(try context.count(for: request) == expected, "\(format)")
        }
    }
}
