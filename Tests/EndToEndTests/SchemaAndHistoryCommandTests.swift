import CoexistHistory
import CoexistStore
import Foundation
import TestSupport
import Testing

@Suite struct SchemaAndHistoryCommandTests {
    @Test func schemaPrintsTheMapping() throws {
        let text = try ProductProcess.run("coexistctl", ["schema", "--model", Fixtures.demoModel])
        #expect(text.status == 0)
        #expect(text.stdout.contains("Task → table task, identity attribute id (UUID)"))
        #expect(text.stdout.contains("createdAt    → created_at  column  dateReal (REAL)"))
        let json = try ProductProcess.run("coexistctl", ["schema", "--model", Fixtures.demoModel, "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let entities = try #require(object["entities"] as? [[String: Any]])
        #expect(entities.compactMap { $0["table"] as? String } == ["category", "task"])
        let sql = try ProductProcess.run("coexistctl", ["schema", "--model", Fixtures.demoModel, "--sql"])
        #expect(sql.stdout.contains("CREATE TABLE \"task\""))
        #expect(try ProductProcess.run("coexistctl", ["schema"]).status == 64)
    }

    /// `schema --versions`: each step of Moody's six versions, and the verdict.
    @Test func schemaVersionsListsTheSteps() throws {
        let text = try ProductProcess.run(
            "coexistctl",
            ["schema", "--model", Fixtures.moodyXcdatamodeld, "--versions"]
        )
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("versions: Moody, Moody 2, Moody 3, Moody 4, Moody 5, Moody 6 (current)"))
        #expect(text.stdout.contains("Moody → Moody 2: lightweight (inferred)\n"), "\(text.stdout)")
        #expect(text.stdout.contains("  Mood.remoteIdentifier renamed to remoteID"))
        let json = try ProductProcess.run(
            "coexistctl",
            ["schema", "--model", Fixtures.demoModel, "--versions", "--json"]
        )
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let steps = try #require(object["steps"] as? [[String: Any]])
        #expect(steps.count == 1 && steps[0]["lightweight"] as? Bool == true, "\(steps)")
        #expect(
            (steps[0]["changes"] as? [String])?.contains("Task.priority added (non-optional, with a default)") == true
        )
        let single = Fixtures.demoModel + "/TaskModel.xcdatamodel"
        let refused = try ProductProcess.run("coexistctl", ["schema", "--model", single, "--versions"])
        #expect(refused.status == 64 && refused.stderr.contains(".xcdatamodeld"), "\(refused.stderr)")
    }

    /// `--versions --store`: the version each real store is at, found from its own model; the store is
    /// only read.
    @Test(arguments: [
        (Fixtures.moody, Fixtures.moodyXcdatamodeld, "Moody"), (Fixtures.moody5, Fixtures.moodyXcdatamodeld, "Moody 5"),
        (Fixtures.sampleModelV1, Fixtures.sampleModelXcdatamodeld, "SampleModel"),
        (Fixtures.sampleModelV2, Fixtures.sampleModelXcdatamodeld, "SampleModel2"),
    ])
    func schemaVersionsFindTheStoresVersion(store: String, model: String, version: String) throws {
        let directory = try TemporaryDirectory()
        let path = try directory.copy(store)
        let before = HistoryToolsTests.files(path)
        let json = try ProductProcess.run(
            "coexistctl",
            ["schema", "--model", model, "--versions", "--store", path, "--json"]
        )
        #expect(json.status == 0, "\(json.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["store"] as? String == version, "\(object)")
        #expect(HistoryToolsTests.files(path) == before, "reading the version changed the store")
        let other = try ProductProcess.run(
            "coexistctl",
            ["schema", "--model", Fixtures.demoModel, "--versions", "--store", path]
        )
        #expect(other.stdout.contains("is at: none of them"), "\(other.stdout)")
    }

    @Test func historyShowsBothSides() throws {
        let directory = try TemporaryDirectory()
        let shared = try SharedStore.create(in: directory)
        try shared.legacy.save(SaveMetadata(author: "old")) { save in
            try save.insert("Category", ["id": DemoStore.uuid(1), "name": .string("legacy")])
        }
        var ref = ObjectRef(entity: "Category", id: "")
        try shared.new.save(SaveMetadata(author: "new")) { save in
            ref = try save.insert("Category", ["name": .string("new")])
        }
        let list = try ProductProcess.run("coexistctl", ["history", "list", shared.legacy.path, "--json"])
        #expect(list.status == 0, "\(list.stderr)")
        let lines = list.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(lines.compactMap { $0["side"] as? String } == ["legacy", "new"])
        #expect(lines.compactMap { $0["author"] as? String } == ["old", "new"])
        let show = try ProductProcess.run("coexistctl", ["history", "show", shared.legacy.path, "2", "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(show.stdout.utf8)) as? [String: Any])
        let change = try #require((object["changes"] as? [[String: Any]])?.first)
        #expect(change["side"] as? String == "new")
        #expect(change["id"] as? String == ref.id)
        #expect(change["entity"] as? String == "Category")
        #expect(change["type"] as? String == "insert")
        let missing = try ProductProcess.run("coexistctl", ["history", "show", shared.legacy.path, "99"])
        #expect(missing.status == 65)
    }
}
