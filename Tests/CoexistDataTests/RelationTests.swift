import CoexistDemo
import Foundation
import TestSupport
import Testing

@testable import CoexistData

/// A backed task whose initializer relates it to a category of its own (through a relation): a fetched one
/// whose row names none has it cleared. `scratch` is a relation the schema does not map.
final class DefaultedRelationTask: BackedModel {
    let persistentBackingData = BackingData()
    @Field var id = UUID()
    @Field var title = ""
    @Relation var category: DemoCategory?
    @Relation var scratch: [DemoCategory]
    static let schema = RecordSchema<DefaultedRelationTask>(
        entity: "Task",
        [.attribute("id", \.id), .attribute("title", \.title), .toOne("category", \.category)]
    )
    required init() { category = DemoCategory(name: "default") }
}

/// A backed category whose tasks are a plain stored property beside a relation-less schema: both kinds of
/// relationship in one record type.
final class MixedCategory: BackedModel {
    let persistentBackingData = BackingData()
    @Field var id = UUID()
    @Field var name = ""
    var tasks: [DemoTask] = []
    static let schema = RecordSchema<MixedCategory>(
        entity: "Category",
        [.attribute("id", \.id), .attribute("name", \.name), .toMany("tasks", \.tasks)]
    )
    required init() {}
}

/// Relationships kept in a backed record's backing data (`@Relation`), beside plain stored ones.
@Suite struct RelationTests {
    let file: SharedDemoFile

    init() throws { file = try SharedDemoFile() }

    @Test func theSchemaKnowsWhichRelationshipsAreRelations() {
        #expect(DemoTask.erasedSchema.isRelation == [true])
        #expect(DemoCategory.erasedSchema.isRelation == [true])
        #expect(DefaultedRelationTask.erasedSchema.isRelation == [true])
        #expect(MixedCategory.erasedSchema.isRelation == [false])
        #expect(ObservedTask.erasedSchema.isRelation == [false])
        // A fetch settles their records without looking at a relationship when none was set.
        #expect(DemoTask.erasedSchema.everyRelationshipIsRelation)
        #expect(!MixedCategory.erasedSchema.everyRelationshipIsRelation)
        #expect(!ObservedTask.erasedSchema.everyRelationshipIsRelation)
    }

    @Test func aRelationKeepsItsTargetsInTheBackingDataAndAnUnmappedOneInTheProperty() {
        let category = DemoCategory(name: "Home")
        let task = DemoTask(title: "one", category: category)
        #expect(task.category === category)
        #expect(task.persistentBackingData.targets(0).map(ObjectIdentifier.init) == [ObjectIdentifier(category)])
        // The context reads a relation from the backing data.
        #expect(
            DemoTask.erasedSchema.relationships[0].read(task).map(ObjectIdentifier.init) == [ObjectIdentifier(category)]
        )
        task.category = nil
        #expect(task.category == nil)
        #expect(task.persistentBackingData.targets(0).isEmpty)

        let other = DemoCategory(name: "Other")
        let defaulted = DefaultedRelationTask()
        #expect(defaulted.category?.name == "default")
        defaulted.scratch = [other, category]
        #expect(defaulted.scratch.map(\.name) == ["Other", "Home"])
        // Not mapped: kept in the property, not in the backing data's single relationship slot (the mapped
        // category's, which keeps its one target).
        #expect(defaulted.persistentBackingData.relations.count == 1)
        #expect(defaulted.category?.name == "default")
        #expect(defaulted.persistentBackingData.targets(0).count == 1)
    }

    /// A record made holding a relation target its row does not name has it cleared; one whose row names a
    /// target gets that one.
    @Test func aRecordMadeHoldingARelationTargetHasItCleared() throws {
        let writer = try file.context("app")
        let home = DemoCategory(name: "Home")
        writer.insert(home)
        writer.insert(DemoTask(title: "filed", category: home))
        writer.insert(DemoTask(title: "loose"))
        try writer.save()

        let reader = try file.context("reader")
        let tasks = try reader.fetch(FetchDescriptor<DefaultedRelationTask>(sortBy: [SortDescriptor(\.title)]))
        #expect(tasks.map(\.title) == ["filed", "loose"])
        #expect(tasks.map { $0.category?.name } == ["Home", nil])
    }

    @Test func relationEditsAreSavedRolledBackAndSeenByAnotherContext() throws {
        let writer = try file.context("app")
        let home = DemoCategory(name: "Home")
        let work = DemoCategory(name: "Work")
        let task = DemoTask(title: "moving", category: home)
        writer.insert(home)
        writer.insert(work)
        writer.insert(task)
        try writer.save()

        task.category = work
        #expect(writer.hasChanges)
        writer.rollback()
        #expect(task.category === home)
        #expect(home.tasks.map(\.title) == ["moving"])

        task.category = work
        try writer.save()
        #expect(work.tasks.map(\.title) == ["moving"])
        #expect(home.tasks.isEmpty)

        let reader = try file.context("reader")
        let categories = try reader.fetch(FetchDescriptor<MixedCategory>(sortBy: [SortDescriptor(\.name)]))
        #expect(categories.map(\.name) == ["Home", "Work"])
        #expect(categories.map { $0.tasks.map(\.title) } == [[], ["moving"]])
        let moved = try file.context("second reader").fetch(FetchDescriptor<DemoTask>())
        #expect(moved.map { $0.category?.name } == ["Work"])
    }
}
