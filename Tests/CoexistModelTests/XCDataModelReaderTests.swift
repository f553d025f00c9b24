import CoexistModel
import Foundation
import TestSupport
import Testing

@Suite struct XCDataModelReaderTests {
    @Test func demoModelCurrentVersionIsV2() throws {
        let model = try XCDataModelReader.read(path: Fixtures.demoModel)
        #expect(model.versionIdentifiers == ["2.0.0"])
        let task = try #require(model.entity(named: "Task"))
        #expect(task.attributes.map(\.name) == ["createdAt", "id", "isCompleted", "notes", "priority", "title"])
        #expect(task.attribute(named: "priority")?.type == .integer16)
        #expect(task.attribute(named: "priority")?.defaultValue == .integer(0))
        #expect(task.attribute(named: "notes")?.defaultValue == .string(""))
        #expect(task.attribute(named: "isCompleted")?.defaultValue == .boolean(false))
        #expect(task.attribute(named: "id")?.type == .uuid)
        #expect(task.attribute(named: "id")?.preservesValueInHistoryOnDeletion == true)
        #expect(task.relationship(named: "category")?.deleteRule == .nullify)
        #expect(task.relationship(named: "category")?.isToMany == false)
        let category = try #require(model.entity(named: "Category"))
        #expect(category.attribute(named: "color")?.defaultValue == .string("blue"))
        let tasks = try #require(category.relationship(named: "tasks"))
        #expect(tasks.isToMany && tasks.deleteRule == .cascade && tasks.inverse == "category")
    }

    @Test func demoModelHasBothVersions() throws {
        let versions = try XCDataModelReader.readVersions(path: Fixtures.demoModel)
        #expect(versions.map(\.name) == ["TaskModel", "TaskModel 2"])
        #expect(versions.map(\.isCurrent) == [false, true])
        let v1 = versions[0].model
        #expect(v1.versionIdentifiers == ["1.0.0"])
        #expect(v1.entity(named: "Task")?.attribute(named: "priority") == nil)
        #expect(v1.entity(named: "Category")?.attribute(named: "color") == nil)
        let differences = v1.structuralDifferences(from: versions[1].model)
        #expect(differences.count == 3)
    }

    @Test func sampleModelInheritanceAndConstraints() throws {
        let versions = try XCDataModelReader.readVersions(path: Fixtures.sampleModelXcdatamodeld)
        let model = try #require(versions.first { $0.name == "SampleModel" }?.model)
        let expensive = try #require(model.entity(named: "ExpensiveSportCar"))
        #expect(model.ancestry(of: expensive).map(\.name) == ["ExpensiveSportCar", "SportCar", "Car"])
        #expect(model.allAttributes(of: expensive).map(\.name).contains("numberPlate"))
        #expect(model.entity(named: "Person")?.uniquenessConstraints == [["firstName", "lastName"]])
        #expect(model.entity(named: "Car")?.attribute(named: "currentDrivingSpeed")?.isTransient == true)
        #expect(model.entity(named: "Car")?.attribute(named: "color")?.valueTransformerName == "ColorTransformer")
        #expect(model.defaultEntityNumbers() == ["Car": 1, "SportCar": 2, "ExpensiveSportCar": 3, "Person": 4])
    }

    @Test func unknownAttributeTypeNamesFileLineEntityAndAttribute() throws {
        let directory = try TemporaryDirectory()
        let original = try String(
            contentsOfFile: Fixtures.demoModel + "/TaskModel 2.xcdatamodel/contents",
            encoding: .utf8
        )
        let broken = original.replacingOccurrences(of: "\"Integer 16\"", with: "\"Integer 128\"")
        let file = try directory.write("contents", Array(broken.utf8))
        let error = #expect(throws: ModelError.self) { try XCDataModelReader.read(path: file) }
        #expect(
            error?.description == "\(file):14: entity Task, property priority: unknown attributeType \"Integer 128\""
        )
    }

    @Test func currentVersionThatDoesNotExistIsNamed() throws {
        let directory = try TemporaryDirectory()
        let folder = directory.file("Broken.xcdatamodeld")
        try FileManager.default.copyItem(atPath: Fixtures.demoModel, toPath: folder)
        let marker = folder + "/.xccurrentversion"
        let text = try String(contentsOfFile: marker, encoding: .utf8).replacingOccurrences(
            of: "TaskModel 2",
            with: "TaskModel 9"
        )
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: marker)
        try text.write(toFile: marker, atomically: true, encoding: .utf8)
        let error = #expect(throws: ModelError.self) { try XCDataModelReader.read(path: folder) }
        #expect(error?.file == marker)
        #expect(error?.message.contains("TaskModel 9.xcdatamodel") == true)
    }

    @Test func malformedXMLGivesTheLine() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write("contents", Array("<model>\n<entity name=\"A\">\n</model>\n".utf8))
        let error = #expect(throws: ModelError.self) { try XCDataModelReader.read(path: file) }
        #expect(error?.message.hasPrefix("malformed XML") == true)
        #expect(error?.line != nil)
    }

    @Test func inconsistentModelsAreRejected() throws {
        let directory = try TemporaryDirectory()
        let xml = """
            <model><entity name="A"><relationship name="b" destinationEntity="Missing" maxCount="1"/></entity></model>
            """
        let file = try directory.write("contents", Array(xml.utf8))
        let error = #expect(throws: ModelError.self) { try XCDataModelReader.read(path: file) }
        #expect(error?.entity == "A")
        #expect(error?.property == "b")
    }

    @Test func missingModelIsAMissingFile() {
        let error = #expect(throws: ModelError.self) { try XCDataModelReader.read(path: "/nonexistent/X.xcdatamodeld") }
        #expect(error?.kind == .missingFile)
    }
}
