import CoexistDemo
import CoexistModel
import CoexistStore
import Foundation
import TestSupport
import Testing

@testable import CoexistData

/// A task record that tells how it was made (the flag is not mapped).
final class MadeTask: PersistentModel {
    var id: UUID
    var title = ""
    var priority = 0
    var createdAt = Date()
    var madeByInit = false
    static let schema = RecordSchema<MadeTask>(
        entity: "Task",
        [
            .attribute("id", \.id), .attribute("title", \.title), .attribute("priority", \.priority),
            .attribute("createdAt", \.createdAt),
        ]
    )
    required init() {
        id = UUID()
        madeByInit = true
    }
    required init(backingData: BackingData) { id = backingData.placeholderUUID }
}

/// A task whose title is an `Int`, and its category: a stored title does not fit.
final class NarrowTask: PersistentModel {
    var id = UUID()
    var title = 0
    var category: NarrowCategory?
    static let schema = RecordSchema<NarrowTask>(
        entity: "Task",
        [.attribute("id", \.id), .attribute("title", \.title), .toOne("category", \.category)]
    )
    required init() {}
}

final class NarrowCategory: PersistentModel {
    var id = UUID()
    var tasks: [NarrowTask] = []
    static let schema = RecordSchema<NarrowCategory>(
        entity: "Category",
        [.attribute("id", \.id), .toMany("tasks", \.tasks)]
    )
    required init() {}
}

/// A task fetched whole whose category is a `DeepCategory`: that category's other tasks are
/// `NarrowTask`s, which fail to load (a failure two levels down the graph).
final class OuterTask: PersistentModel {
    var id = UUID()
    var title = ""
    var category: DeepCategory?
    static let schema = RecordSchema<OuterTask>(
        entity: "Task",
        [.attribute("id", \.id), .attribute("title", \.title), .toOne("category", \.category)]
    )
    required init() {}
}

final class DeepCategory: PersistentModel {
    var id = UUID()
    var tasks: [NarrowTask] = []
    static let schema = RecordSchema<DeepCategory>(
        entity: "Category",
        [.attribute("id", \.id), .toMany("tasks", \.tasks)]
    )
    required init() {}
}

/// A task that counts the writes of its category, and may be made holding one (`init(backingData:)` sets
/// ``made`` when it is not nil).
final class ObservedTask: PersistentModel {
    nonisolated(unsafe) static var made: DemoCategory?
    var id = UUID()
    var title = ""
    var categoryWrites = 0
    var category: DemoCategory? { didSet { categoryWrites += 1 } }
    static let schema = RecordSchema<ObservedTask>(
        entity: "Task",
        [.attribute("id", \.id), .attribute("title", \.title), .toOne("category", \.category)]
    )
    required init() {}
    required init(backingData: BackingData) {
        category = Self.made
        categoryWrites = 0
    }
}

/// A backed task (every attribute a field) whose initial values name a category: a fetched one whose row
/// names none has it cleared.
final class DefaultedFieldTask: BackedModel {
    let persistentBackingData = BackingData()
    @Field var id = UUID()
    @Field var title = ""
    var category: DemoCategory? = DemoCategory(name: "default")
    static let schema = RecordSchema<DefaultedFieldTask>(
        entity: "Task",
        [.attribute("id", \.id), .attribute("title", \.title), .toOne("category", \.category)]
    )
    required init() {}
}

/// How fetches make records: with `init(backingData:)`, a level of the graph at a time (more targets than
/// one query's chunk), nothing left registered when a row fails, and `propertiesToFetch`.
@Suite struct FetchLoadingTests {
    let file: SharedDemoFile

    init() throws { file = try SharedDemoFile() }

    /// Saves tasks titled `filed` in a category "Home" and tasks titled `loose` in none.
    private func saveTasks(filed: [String], loose: [String]) throws {
        let writer = try file.context("app")
        let category = DemoCategory(name: "Home")
        writer.insert(category)
        for title in filed { writer.insert(DemoTask(title: title, category: category)) }
        for title in loose { writer.insert(DemoTask(title: title)) }
        try writer.save()
    }

    @Test func fetchedRecordsAreMadeWithTheBackingDataInitializer() throws {
        let writer = try file.context("app")
        let inserted = MadeTask()
        inserted.title = "one"
        writer.insert(inserted)
        try writer.save()
        #expect(inserted.madeByInit)
        let fetched = try #require(try file.context("reader").fetch(FetchDescriptor<MadeTask>()).first)
        #expect(!fetched.madeByInit)
        #expect(fetched.id == inserted.id)
        #expect(fetched.title == "one")
    }

    @Test func aFetchSetsOnlyTheRelationshipsItChanges() throws {
        try saveTasks(filed: ["filed"], loose: ["loose"])

        // Made holding nothing: the task without a category is left alone, the other's is set once.
        let reader = try file.context("reader")
        let tasks = try reader.fetch(FetchDescriptor<ObservedTask>(sortBy: [SortDescriptor(\.title)]))
        #expect(tasks.map(\.title) == ["filed", "loose"])
        #expect(tasks.map(\.categoryWrites) == [1, 0])
        #expect(tasks[0].category?.name == "Home")
        #expect(tasks[1].category == nil)

        // Made holding a category the row does not name: it is cleared.
        ObservedTask.made = DemoCategory(name: "stray")
        defer { ObservedTask.made = nil }
        let again = try file.context("second reader").fetch(FetchDescriptor<ObservedTask>())
        #expect(again.count == 2)
        #expect(again.allSatisfy { $0.categoryWrites == 1 })
        #expect(again.first { $0.title == "loose" }?.category == nil)
        #expect(again.first { $0.title == "filed" }?.category?.name == "Home")
    }

    /// A record type whose every attribute is a field, made holding a target its row does not name, has it
    /// cleared.
    @Test func aFieldRecordMadeHoldingATargetHasItCleared() throws {
        try saveTasks(filed: ["filed"], loose: ["loose"])
        let reader = try file.context("reader")
        let tasks = try reader.fetch(FetchDescriptor<DefaultedFieldTask>(sortBy: [SortDescriptor(\.title)]))
        #expect(tasks.map(\.title) == ["filed", "loose"])
        #expect(tasks.map { $0.category?.name } == ["Home", nil])
        let plain = try file.context("other reader").fetch(FetchDescriptor<DemoTask>(sortBy: [SortDescriptor(\.title)]))
        #expect(plain.map { $0.category?.name } == ["Home", nil])
    }

    @Test func aCategoryLoadsAllItsTasksAndTheyPointBack() throws {
        let writer = try file.context("app")
        let category = DemoCategory(name: "Big")
        writer.insert(category)
        // More than one query's chunk of identities (512).
        let tasks = (0..<1_200).map { DemoTask(title: "Task \($0)", priority: $0 % 3, category: category) }
        for task in tasks { writer.insert(task) }
        try writer.save()

        let reader = try file.context("reader")
        let loaded = try #require(try reader.fetch(FetchDescriptor<DemoCategory>()).first)
        #expect(loaded.tasks.count == 1_200)
        #expect(Set(loaded.tasks.map(\.id)) == Set(tasks.map(\.id)))
        #expect(loaded.tasks.allSatisfy { $0.category === loaded })
        #expect(!reader.hasChanges)
        // The tasks fetched next are the records the category holds.
        let fetched = try reader.fetch(FetchDescriptor<DemoTask>())
        #expect(Set(fetched.map(ObjectIdentifier.init)) == Set(loaded.tasks.map(ObjectIdentifier.init)))
    }

    @Test func aRowThatFailsToDecodeLeavesNoRecordBehind() throws {
        let writer = try file.context("app")
        let category = DemoCategory(name: "Home")
        writer.insert(category)
        for index in 0..<3 { writer.insert(DemoTask(title: "Task \(index)", category: category)) }
        try writer.save()

        let reader = try file.context("reader")
        #expect(throws: StoreError.self) { try reader.fetch(FetchDescriptor<NarrowCategory>()) }
        // The category, made before its tasks failed, does not stay: a save inserts nothing.
        #expect(reader.registrations.isEmpty)
        #expect(!reader.hasChanges)
        #expect(try reader.save() == nil)
    }

    @Test func aColumnTheRecordDoesNotReadIsNotChecked() throws {
        let writer = try file.context("app")
        writer.insert(DemoTask(title: "dated"))
        try writer.save()
        // A boolean that is neither 0 nor 1 (past the column's CHECK, as another program might write it).
        try writer.store.connection.execute("PRAGMA ignore_check_constraints = ON")
        try writer.store.connection.execute("UPDATE task SET is_completed = 2")

        // OptionalNotesTask maps no isCompleted: its fetch, whole or partial, reads the rest.
        let reader = try file.context("reader")
        #expect(try reader.fetch(FetchDescriptor<OptionalNotesTask>()).map(\.title) == ["dated"])
        var partial = FetchDescriptor<OptionalNotesTask>()
        partial.propertiesToFetch = [\.title]
        #expect(try file.context("partial").fetch(partial).map(\.title) == ["dated"])
        // A record that reads it is refused, whole or partial.
        #expect(throws: StoreError.self) { try file.context("completion").fetch(FetchDescriptor<DemoTask>()) }
        var completion = FetchDescriptor<DemoTask>()
        completion.propertiesToFetch = [\.isCompleted]
        #expect(throws: StoreError.self) { try file.context("partial completion").fetch(completion) }
    }

    @Test func aFailureTwoLevelsDownLeavesNoRecordBehind() throws {
        let writer = try file.context("app")
        let category = DemoCategory(name: "Home")
        writer.insert(category)
        writer.insert(DemoTask(title: "first", category: category))
        writer.insert(DemoTask(title: "second", category: category))
        try writer.save()

        let reader = try file.context("reader")
        #expect(throws: StoreError.self) {
            try reader.fetch(FetchDescriptor<OuterTask>(predicate: #Predicate { $0.title == "first" }))
        }
        #expect(reader.registrations.isEmpty)
        #expect(!reader.hasChanges)
        #expect(try reader.save() == nil)
        #expect(try file.context("check").fetchCount(FetchDescriptor<DemoTask>()) == 2)
    }

    @Test func aFailedFetchLeavesWhatTheContextHeldAsItWas() throws {
        try saveTasks(filed: ["first", "second"], loose: ["loose", "other"])

        let reader = try file.context("reader")
        let held = try #require(
            try reader.fetch(FetchDescriptor<DemoTask>(predicate: #Predicate { $0.title == "other" })).first
        )
        held.priority = 5
        let order = reader.insertionOrder
        // "loose" names no target: complete as its row is read. "first" fails two levels down: its category's
        // other task is a `NarrowTask`, whose title does not fit.
        #expect(throws: StoreError.self) {
            try reader.fetch(
                FetchDescriptor<OuterTask>(predicate: #Predicate { $0.title == "first" || $0.title == "loose" })
            )
        }
        #expect(reader.registrations.count == 1)
        #expect(reader.registrations[ObjectIdentifier(held)] != nil)
        #expect(reader.insertionOrder == order)
        #expect(held.priority == 5 && reader.hasChanges)
        #expect(try reader.save() != nil)
        #expect(try file.context("check").fetchCount(FetchDescriptor<DemoTask>()) == 4)
    }

    @Test func aFetchOfAnotherTypeLeavesAPartialRecordAlone() throws {
        let writer = try file.context("app")
        writer.insert(DemoTask(title: "Write", priority: 2))
        try writer.save()
        let reader = try file.context("reader")
        var partial = FetchDescriptor<DemoTask>()
        partial.propertiesToFetch = [\.title]
        let task = try #require(try reader.fetch(partial).first)
        // The same rows through a record type with fewer attributes: the held task is returned as it is.
        _ = try reader.fetch(FetchDescriptor<MadeTask>())
        #expect(task.priority == 0)
        #expect(!reader.hasChanges)
        #expect(try reader.fetch(FetchDescriptor<DemoTask>()).first?.priority == 2)
    }

    @Test func propertiesToFetchReadsOnlyThoseAndAFullFetchFillsTheRest() throws {
        let writer = try file.context("app")
        writer.insert(DemoTask(title: "Write", priority: 2))
        try writer.save()

        let reader = try file.context("reader")
        var partial = FetchDescriptor<DemoTask>()
        partial.propertiesToFetch = [\.title]
        partial.relationshipKeyPathsForPrefetching = [\.category]
        let task = try #require(try reader.fetch(partial).first)
        #expect(task.title == "Write")
        #expect(task.priority == 0)
        #expect(!reader.hasChanges)
        // A full fetch fills in what was left out.
        #expect(try reader.fetch(FetchDescriptor<DemoTask>()).first === task)
        #expect(task.priority == 2)
        #expect(!reader.hasChanges)
        // So does an enumeration.
        let enumerating = try file.context("enumerating")
        let held = try #require(try enumerating.fetch(partial).first)
        #expect(held.priority == 0)
        var seen: [DemoTask] = []
        try enumerating.enumerate(FetchDescriptor<DemoTask>(), batchSize: 1) { seen.append($0) }
        #expect(seen.count == 1 && seen.first === held)
        #expect(held.priority == 2)
        #expect(!enumerating.hasChanges)

        // An attribute set by the app before the fill is kept and saved.
        let other = try file.context("other")
        let again = try #require(try other.fetch(partial).first)
        again.priority = 5
        _ = try other.fetch(FetchDescriptor<DemoTask>())
        #expect(again.priority == 5)
        #expect(other.hasChanges)
        try other.save()
        #expect(try file.context("check").fetch(FetchDescriptor<DemoTask>()).first?.priority == 5)

        // A key path the record schema does not map is refused.
        var unmapped = FetchDescriptor<MadeTask>()
        unmapped.propertiesToFetch = [\.madeByInit]
        #expect(throws: StoreError.self) { try reader.fetch(unmapped) }
    }
}
