import CoexistModel
import CoexistStore
import Foundation
import TestSupport
import Testing

@testable import CoexistData

/// The SwiftData-shaped context following the file, rolling back and saving in transactions.
@Suite struct LiveContextTests {
    let file: SharedDemoFile
    var path: String { file.path }

    init() throws { file = try SharedDemoFile() }

    func context(_ author: String) throws -> ModelContext { try file.context(author) }

    @Test func anotherConnectionsCommitsShowInHeldRecords() throws {
        let mine = try context("app")
        let category = CategoryRecord(name: "Errands")
        let task = TaskRecord(title: "Buy milk", category: category)
        mine.insert(task)
        try mine.save()
        #expect(try mine.mergeChangesFromStore().isEmpty)

        let other = try context("other")
        let identifier = try #require(mine.persistentIdentifier(of: task))
        let theirs = try #require(try other.model(for: identifier, as: TaskRecord.self))
        theirs.title = "Buy oat milk"
        theirs.priority = 3
        let token = try #require(try other.save())

        let changes = try mine.mergeChangesFromStore()
        #expect(changes.map(\.token) == [token])
        #expect(changes.first?.updated == [identifier])
        #expect(task.title == "Buy oat milk" && task.priority == 3)

        // An unsaved local edit is kept and reported.
        task.title = "Mine"
        theirs.title = "Theirs"
        try other.save()
        #expect(try mine.mergeChangesFromStore().first?.conflicts == [identifier])
        #expect(task.title == "Mine")

        mine.rollback()
        let moved = TaskRecord(title: "Elsewhere")
        other.insert(moved)
        let categoryID = try #require(mine.persistentIdentifier(of: category))
        let otherCategory = try #require(try other.model(for: categoryID, as: CategoryRecord.self))
        otherCategory.tasks.append(moved)
        other.delete(theirs)
        try other.save()
        let last = try mine.mergeChangesFromStore()
        #expect(last.flatMap(\.deleted) == [identifier])
        #expect(mine.persistentIdentifier(of: task) == nil)
        #expect(category.tasks.map(\.title) == ["Elsewhere"])
    }

    @Test func rollbackRestoresEveryChangeAndTransactionsAreAllOrNothing() throws {
        let context = try context("app")
        let category = CategoryRecord(name: "Errands")
        let kept = TaskRecord(title: "Kept", category: category)
        context.insert(kept)
        try context.save()
        kept.title = "Changed"
        kept.category = nil
        context.delete(category)
        let added = TaskRecord(title: "Added")
        context.insert(added)
        #expect(context.hasChanges)
        context.rollback()
        #expect(!context.hasChanges)
        #expect(kept.title == "Kept" && kept.category === category)
        #expect(context.persistentIdentifier(of: added) == nil)
        #expect(try context.save() == nil)

        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try context.transaction {
                kept.title = "In a failed transaction"
                throw Refused()
            }
        }
        #expect(kept.title == "Kept")
        let token = try context.transaction { kept.priority = 5 }
        #expect(token != nil)
        #expect(try context.fetch(FetchDescriptor<TaskRecord>()).map(\.priority) == [5])
    }

    /// A committed save whose reading back fails (a related record the context's type cannot hold) still
    /// returns its token: the transaction keeps what the file holds, and nothing is left pending.
    @Test func aCommittedTransactionIsNeverRolledBack() throws {
        let model = try XCDataModelReader.read(path: Fixtures.demoModel)
        let mine = try ModelContext(try NewStore(path: path, model: model), author: "app")
        let category = MistypedCategory()
        category.name = "Errands"
        mine.insert(category)
        try mine.save()
        let other = try context("other")
        let identifier = try #require(mine.persistentIdentifier(of: category))
        let theirs = try #require(try other.model(for: identifier, as: CategoryRecord.self))
        theirs.tasks.append(TaskRecord(title: "Buy milk"))
        try other.save()

        let token = try mine.transaction { category.name = "Home" }
        #expect(token != nil)
        #expect(category.name == "Home")
        #expect(!mine.hasChanges)
        #expect(try other.model(for: identifier, as: CategoryRecord.self)?.name == "Errands")
        _ = try other.mergeChangesFromStore()
        #expect(try other.model(for: identifier, as: CategoryRecord.self)?.name == "Home")
    }
}

/// A Task record type whose title is a number: stored titles (text) do not fit it.
final class MistypedTask: PersistentModel {
    var id = UUID()
    var title = 0
    static let schema = RecordSchema<MistypedTask>(
        entity: "Task",
        [.attribute("id", \.id), .attribute("title", \.title)]
    )
    required init() {}
}

/// The Category record holding ``MistypedTask``s.
final class MistypedCategory: PersistentModel {
    var id = UUID()
    var name = ""
    var tasks: [MistypedTask] = []
    static let schema = RecordSchema<MistypedCategory>(
        entity: "Category",
        [.attribute("id", \.id), .attribute("name", \.name), .toMany("tasks", \.tasks)]
    )
    required init() {}
}
