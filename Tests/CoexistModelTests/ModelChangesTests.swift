import CoexistModel
import Foundation
import TestSupport
import Testing

/// What changes between model versions, and whether Core Data could infer the migration: the real
/// `.xcdatamodeld` folders of the project and the fixtures, and hand-made models for what is not inferable.
@Suite struct ModelChangesTests {
    static func steps(_ path: String) throws -> [(String, ModelChanges)] {
        let versions = try XCDataModelReader.readVersions(path: path)
        return zip(versions, versions.dropFirst()).map {
            ("\($0.name) → \($1.name)", ModelChanges(from: $0.model, to: $1.model))
        }
    }

    /// The guide's V1 → V2: Task gains priority and notes, Category gains color, all with defaults.
    @Test func theGuidesTaskModelIsLightweight() throws {
        let steps = try Self.steps(Fixtures.demoModel)
        #expect(steps.map(\.0) == ["TaskModel → TaskModel 2"])
        let changes = try #require(steps.first?.1)
        #expect(changes.isLightweight, "\(changes.reasons)")
        #expect(
            Set(changes.changes) == [
                .attributeAdded(entity: "Task", name: "priority", isOptional: false, hasDefault: true),
                .attributeAdded(entity: "Task", name: "notes", isOptional: false, hasDefault: true),
                .attributeAdded(entity: "Category", name: "color", isOptional: false, hasDefault: true),
            ]
        )
    }

    /// objc.io Moody's five steps, as its project describes them (fixtures' SOURCES.txt).
    @Test func moodysVersions() throws {
        let steps = try Self.steps(Fixtures.moodyXcdatamodeld)
        #expect(steps.count == 5)
        let changes = steps.map { Set($0.1.changes) }
        #expect(
            changes[0] == [
                .attributeRenamed(entity: "Mood", from: "remoteIdentifier", to: "remoteID"),
                .attributeAdded(entity: "Mood", name: "rating", isOptional: false, hasDefault: true),
            ]
        )
        #expect(
            changes[1] == [
                .relationshipAdded(entity: "Continent", name: "moods"),
                .relationshipAdded(entity: "Mood", name: "continent"),
            ]
        )
        // The abstract parent removed: its properties stay on the entities that leave it.
        #expect(
            changes[2] == [
                .parentChanged(entity: "Continent", from: "GeographicRegion", to: nil),
                .parentChanged(entity: "Country", from: "GeographicRegion", to: nil),
                .entityRemoved("GeographicRegion"),
            ]
        )
        #expect(changes[3].contains(.entityRemoved("Continent")))
        #expect(
            changes[3].contains(
                .attributeAdded(entity: "Country", name: "isoContinent", isOptional: true, hasDefault: true)
            )
        )
        #expect(changes[4].contains(.entityAdded("Continent")))
        #expect(steps.allSatisfy { $0.1.isLightweight }, "\(steps.map { $0.1.reasons })")
    }

    /// CoreDataPlus SampleModel: an entity renamed through its renaming identifier, an inherited attribute
    /// removed once (on the entity that declared it, not on each sub-entity).
    @Test func sampleModelRenamesAndRemovesOnce() throws {
        let steps = try Self.steps(Fixtures.sampleModelXcdatamodeld)
        let first = try #require(steps.first?.1)
        #expect(
            Set(first.changes) == [
                .entityRenamed(from: "ExpensiveSportCar", to: "LuxuryCar"),
                .attributeRemoved(entity: "Car", name: "color"),
                .attributeRemoved(entity: "Person", name: "id"),
            ]
        )
        #expect(first.entitySources["LuxuryCar"] == .some("ExpensiveSportCar"))
        #expect(steps[1].1.changes.contains(.entityAdded("Maker")))
    }

    static func model(_ entities: [Entity]) -> Model { Model(entities: entities) }

    /// What Core Data cannot infer is refused with the reason.
    @Test func whatCannotBeInferredSaysWhy() {
        let title = Attribute(name: "title", type: .string, isOptional: true)
        let source = Self.model([
            Entity(
                name: "Task",
                attributes: [title],
                relationships: [Relationship(name: "owner", destination: "Person")]
            ),
            Entity(name: "Person"), Entity(name: "Team"),
        ])
        let changed = Self.model([
            Entity(
                name: "Task",
                attributes: [
                    Attribute(name: "title", type: .integer64, isOptional: true),
                    Attribute(name: "due", type: .date, isOptional: false),
                ],
                relationships: [Relationship(name: "owner", destination: "Team")]
            ),
            Entity(name: "Person", superentity: "Party"), Entity(name: "Team", superentity: "Party"),
            Entity(name: "Party"),
        ])
        let changes = ModelChanges(from: source, to: changed)
        #expect(!changes.isLightweight)
        let reasons = changes.reasons.joined(separator: "\n")
        #expect(reasons.contains("Task.title changes type (String → Integer 64)"), "\(reasons)")
        #expect(reasons.contains("Task.due is added non-optional without a default"), "\(reasons)")
        #expect(reasons.contains("Task.owner points to another entity (Person → Team)"), "\(reasons)")
        #expect(reasons.contains("merges entities of separate hierarchies (Person, Team)"), "\(reasons)")
        let required = Self.model([Entity(name: "Task", attributes: [Attribute(name: "title", type: .string)])])
        let tightened = ModelChanges(from: source, to: required)
        #expect(
            tightened.reasons.contains { $0.contains("becomes non-optional without a default") },
            "\(tightened.reasons)"
        )
        let withDefault = Self.model([
            Entity(name: "Task", attributes: [Attribute(name: "title", type: .string, defaultValue: .string(""))])
        ])
        #expect(ModelChanges(from: source, to: withDefault).isLightweight)
    }
}

/// Versions come in the order their numbers say: `M 2` before `M 10`.
@Suite struct VersionOrderTests {
    @Test func numbersSortAsNumbers() throws {
        let directory = try TemporaryDirectory()
        let folder = directory.file("M.xcdatamodeld")
        let contents = try #require(
            FileManager.default.contents(atPath: Fixtures.demoModel + "/TaskModel.xcdatamodel/contents")
        )
        for name in ["M 10", "M", "M 2", "M 9"] {
            try FileManager.default.createDirectory(
                atPath: folder + "/\(name).xcdatamodel",
                withIntermediateDirectories: true
            )
            #expect(
                FileManager.default.createFile(atPath: folder + "/\(name).xcdatamodel/contents", contents: contents)
            )
        }
        let plist =
            #"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>M 10.xcdatamodel</string></dict></plist>"#
        #expect(FileManager.default.createFile(atPath: folder + "/.xccurrentversion", contents: Data(plist.utf8)))
        let versions = try XCDataModelReader.readVersions(path: folder)
        #expect(versions.map(\.name) == ["M", "M 2", "M 9", "M 10"])
        #expect(versions.last?.isCurrent == true)
    }
}
