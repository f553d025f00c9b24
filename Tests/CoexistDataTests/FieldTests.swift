import CoexistDemo
import CoexistModel
import CoexistStore
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import CoexistData

/// A backed task counting the identities its initial values make; `notes` is a plain stored property and
/// `scratch` a field the schema does not map.
final class CountedTask: BackedModel {
    static let identitiesMade = Atomic<Int>(0)
    let persistentBackingData = BackingData()
    @Field var id = CountedTask.newIdentity()
    @Field var title = ""
    @Field var priority = 0
    @Field var createdAt = Date()
    var notes = ""
    @Field var scratch = "unsaved"
    static let schema = RecordSchema<CountedTask>(
        entity: "Task",
        [
            .attribute("id", \.id), .attribute("title", \.title), .attribute("priority", \.priority),
            .attribute("createdAt", \.createdAt), .attribute("notes", \.notes),
        ]
    )
    required init() {}

    static func newIdentity() -> UUID {
        identitiesMade.add(1, ordering: .relaxed)
        return UUID()
    }
}

/// A backed task whose title is an `Int` field: a stored title does not fit.
final class NarrowFieldTask: BackedModel {
    let persistentBackingData = BackingData()
    @Field var id = UUID()
    @Field var title = 0
    static let schema = RecordSchema<NarrowFieldTask>(
        entity: "Task",
        [.attribute("id", \.id), .attribute("title", \.title)]
    )
    required init() {}
}

/// A backed task whose initializers use its fields (the pattern a plain record uses to skip a costly
/// default): making its schema must not make it again, and a partial fetch keeps what the initializer set.
final class InitializingTask: BackedModel {
    let persistentBackingData = BackingData()
    @Field var id = UUID()
    @Field var title = ""
    @Field var priority = 0
    @Field var createdAt = Date()
    static let schema = RecordSchema<InitializingTask>(
        entity: "Task",
        [
            .attribute("id", \.id), .attribute("title", \.title), .attribute("priority", \.priority),
            .attribute("createdAt", \.createdAt),
        ]
    )
    required init() {
        id = UUID()
        title = "Untitled \(priority)"
    }
    required init(backingData: BackingData) {
        id = backingData.placeholderUUID
        priority = -1
    }
}

/// A generic backed task: its fields' key paths carry the type's argument, so each access may make a new
/// key path object (one freed object's address may be the next one's).
final class GenericTask<Marker>: BackedModel {
    let persistentBackingData = BackingData()
    @Field var id = UUID()
    @Field var title = ""
    @Field var notes = ""
    @Field var createdAt = Date()
    static var schema: RecordSchema<GenericTask> {
        RecordSchema<GenericTask>(
            entity: "Task",
            [
                .attribute("id", \.id), .attribute("title", \.title), .attribute("notes", \.notes),
                .attribute("createdAt", \.createdAt),
            ]
        )
    }
    required init() {}
}

/// A task with plain stored properties only: the path records without fields take.
final class PlainTask: PersistentModel {
    var id = UUID()
    var title = ""
    var priority = 0
    var createdAt = Date()
    static let schema = RecordSchema<PlainTask>(
        entity: "Task",
        [
            .attribute("id", \.id), .attribute("title", \.title), .attribute("priority", \.priority),
            .attribute("createdAt", \.createdAt),
        ]
    )
    required init() {}
}

/// A backed task whose notes are an optional field: its conversion is not one of the common types'.
final class OptionalNotesTask: BackedModel {
    let persistentBackingData = BackingData()
    @Field var id = UUID()
    @Field var title = ""
    @Field var notes: String? = "initial"
    static let schema = RecordSchema<OptionalNotesTask>(
        entity: "Task",
        [.attribute("id", \.id), .attribute("notes", \.notes), .attribute("title", \.title)]
    )
    required init() {}
}

/// Records whose attributes are `@Field`s kept in their backing data, beside records with plain properties.
@Suite(.serialized) struct FieldTests {
    let file: SharedDemoFile

    init() throws { file = try SharedDemoFile() }

    @Test func theSchemaKnowsWhichAttributesAreFields() {
        let schema = CountedTask.erasedSchema
        #expect(schema.attributes.map(\.name) == ["id", "title", "priority", "createdAt", "notes"])
        #expect(schema.isField == [true, true, true, true, false])
        #expect(PlainTask.erasedSchema.isField == [false, false, false, false])
        #expect(PlainTask.erasedSchema.backing == nil)
    }

    @Test func initialValuesAreComputedOnceForNewRecordsAndNeverForFetchedOnes() throws {
        // The type's first use makes one record to find its fields: done before counting.
        _ = CountedTask.erasedSchema
        let before = CountedTask.identitiesMade.load(ordering: .relaxed)
        let writer = try file.context("app")
        let tasks = (0..<3).map { index in
            let task = CountedTask()
            task.title = "Task \(index)"
            task.priority = index
            task.notes = "note \(index)"
            return task
        }
        #expect(CountedTask.identitiesMade.load(ordering: .relaxed) == before + 3)
        #expect(tasks[0].id == tasks[0].id)
        for task in tasks { writer.insert(task) }
        try writer.save()
        #expect(CountedTask.identitiesMade.load(ordering: .relaxed) == before + 3)

        let reader = try file.context("reader")
        let fetched = try reader.fetch(
            FetchDescriptor<CountedTask>(sortBy: [SortDescriptor(\.priority)])
        )
        #expect(CountedTask.identitiesMade.load(ordering: .relaxed) == before + 3)
        #expect(fetched.map(\.id) == tasks.map(\.id))
        #expect(fetched.map(\.title) == ["Task 0", "Task 1", "Task 2"])
        #expect(fetched.map(\.notes) == ["note 0", "note 1", "note 2"])
        #expect(!reader.hasChanges)

        // A field the schema does not map is the record's own: never saved, never overwritten.
        tasks[0].scratch = "mine"
        #expect(tasks[0].scratch == "mine" && tasks[1].scratch == "unsaved")
        #expect(fetched[0].scratch == "unsaved")
        #expect(!writer.hasChanges)
    }

    @Test func editsOfFieldsAreSavedRolledBackAndMerged() throws {
        let writer = try file.context("app")
        let task = CountedTask()
        task.title = "First"
        writer.insert(task)
        try writer.save()

        let reader = try file.context("reader")
        let held = try #require(try reader.fetch(FetchDescriptor<CountedTask>()).first)
        held.title = "Edited"
        held.notes = "Edited too"
        #expect(reader.hasChanges)
        reader.rollback()
        #expect(held.title == "First" && held.notes == "")
        #expect(!reader.hasChanges)

        task.title = "Second"
        task.priority = 7
        let token = try #require(try writer.save())
        let changes = try reader.mergeChangesFromStore()
        #expect(changes.map(\.token) == [token])
        #expect(held.title == "Second" && held.priority == 7)
        #expect(!reader.hasChanges)

        held.priority = 8
        try reader.save()
        #expect(try file.context("check").fetch(FetchDescriptor<PlainTask>()).first?.priority == 8)
    }

    @Test func aStoredValueThatDoesNotFitAFieldFailsTheFetch() throws {
        let writer = try file.context("app")
        let task = PlainTask()
        task.title = "not a number"
        writer.insert(task)
        try writer.save()
        let reader = try file.context("reader")
        #expect(throws: StoreError.self) { try reader.fetch(FetchDescriptor<NarrowFieldTask>()) }
        #expect(reader.registrations.isEmpty)
    }

    @Test func partialFetchesLeaveFieldsAtTheirInitialValueUntilAFullOne() throws {
        let writer = try file.context("app")
        let task = CountedTask()
        task.title = "Partial"
        task.priority = 4
        writer.insert(task)
        try writer.save()

        let reader = try file.context("reader")
        var partial = FetchDescriptor<CountedTask>()
        partial.propertiesToFetch = [\.title]
        let held = try #require(try reader.fetch(partial).first)
        #expect(held.title == "Partial" && held.priority == 0)
        #expect(!reader.hasChanges)
        #expect(try reader.fetch(FetchDescriptor<CountedTask>()).first === held)
        #expect(held.priority == 4 && held.id == task.id)
        #expect(!reader.hasChanges)
    }

    @Test func initializersThatUseFieldsWork() throws {
        let made = InitializingTask()
        #expect(made.title == "Untitled 0")
        #expect(InitializingTask.erasedSchema.isField == [true, true, true, true])
        made.priority = 3
        let writer = try file.context("app")
        writer.insert(made)
        try writer.save()

        let reader = try file.context("reader")
        let fetched = try #require(try reader.fetch(FetchDescriptor<InitializingTask>()).first)
        #expect(fetched.id == made.id && fetched.title == "Untitled 0" && fetched.priority == 3)
        #expect(!reader.hasChanges)
        // Left out of a partial fetch, a field keeps what the initializer set, until a full fetch.
        let partialReader = try file.context("partial")
        var partial = FetchDescriptor<InitializingTask>()
        partial.propertiesToFetch = [\.title]
        let held = try #require(try partialReader.fetch(partial).first)
        #expect(held.title == "Untitled 0" && held.priority == -1)
        #expect(!partialReader.hasChanges)
        _ = try partialReader.fetch(FetchDescriptor<InitializingTask>())
        #expect(held.priority == 3 && held.id == made.id)
    }

    @Test func fieldsOfAGenericRecordKeepTheirOwnValues() throws {
        let task = GenericTask<Int>()
        for round in 0..<1_000 {
            task.title = "title \(round)"
            task.notes = "notes \(round)"
            #expect(task.title == "title \(round)" && task.notes == "notes \(round)")
        }
        let writer = try file.context("app")
        writer.insert(task)
        try writer.save()
        let fetched = try #require(try file.context("reader").fetch(FetchDescriptor<GenericTask<Int>>()).first)
        #expect(fetched.title == "title 999" && fetched.notes == "notes 999" && fetched.id == task.id)
    }

    @Test func aFetchGivesEveryStoredValueAndTheRecordsItHoldsAgain() throws {
        let writer = try file.context("app")
        let category = DemoCategory(name: "Home")
        let dated = DemoTask(
            title: "dated",
            isCompleted: true,
            createdAt: Date(timeIntervalSince1970: 1_000),
            priority: 3
        )
        dated.notes = "some notes"
        let related = DemoTask(title: "related", priority: -2, category: category)
        for record in [dated, related] { writer.insert(record) }
        try writer.save()

        let reader = try file.context("reader")
        let fetched = try reader.fetch(FetchDescriptor<DemoTask>(sortBy: [SortDescriptor(\.priority)]))
        #expect(fetched.map(\.title) == ["related", "dated"])
        let (first, second) = (fetched[0], fetched[1])
        #expect(first.id == related.id && first.priority == -2 && !first.isCompleted && first.notes.isEmpty)
        #expect(first.category?.name == "Home" && first.category?.tasks.first === first)
        #expect(second.id == dated.id && second.isCompleted && second.notes == "some notes")
        #expect(second.createdAt == Date(timeIntervalSince1970: 1_000) && second.category == nil)
        #expect(!reader.hasChanges)

        // A context that holds records gets the same objects back, its unsaved edits kept.
        second.title = "edited"
        let again = try reader.fetch(FetchDescriptor<DemoTask>(sortBy: [SortDescriptor(\.priority)]))
        #expect(again.count == 2 && again[0] === first && again[1] === second)
        #expect(second.title == "edited")

        // Fields whose conversion is the property type's own (an optional) read the stored value too.
        let optional = try file.context("other").fetch(FetchDescriptor<OptionalNotesTask>())
        #expect(Set(optional.map(\.notes)) == ["", "some notes"])
    }

    @Test func plainRecordsAreSavedRolledBackAndMergedAsBefore() throws {
        let writer = try file.context("app")
        let task = PlainTask()
        task.title = "Plain"
        writer.insert(task)
        try writer.save()

        let reader = try file.context("reader")
        let held = try #require(try reader.fetch(FetchDescriptor<PlainTask>()).first)
        #expect(held.id == task.id && held.title == "Plain")
        held.title = "Edited"
        reader.rollback()
        #expect(held.title == "Plain")
        task.priority = 2
        try writer.save()
        _ = try reader.mergeChangesFromStore()
        #expect(held.priority == 2)
    }
}
