import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import CoexistStore
import TestSupport
import Testing

@Suite struct NewSchemaTests {
    @Test(arguments: [
        "createdAt": "created_at", "isCompleted": "is_completed", "URLString": "url_string", "cloudGUID": "cloud_guid",
        "ICNote": "ic_note", "id": "id", "z_pk": "z_pk",
    ])
    func snakeCase(name: String, expected: String) {
        #expect(Naming.snakeCase(name) == expected)
    }

    @Test func demoModelMapping() throws {
        let schema = try NewSchema(model: XCDataModelReader.read(path: Fixtures.demoModel))
        let task = try #require(schema.entities["Task"])
        #expect(task.table == "task")
        #expect(task.identity == .uuidAttribute("id"))
        #expect(task.properties["createdAt"] == .column("created_at", .dateReal))
        #expect(task.properties["priority"] == .column("priority", .integer16))
        #expect(task.properties["category"] == .toOne(column: "category_id", position: nil))
        #expect(schema.entities["Category"]?.properties["tasks"] == .inverse("category"))
        let sql = schema.createStatements().joined(separator: "\n")
        #expect(sql.contains("REFERENCES \"category\" (\"id\") ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED"))
    }

    @Test func overridesRenameTablesAndColumns() throws {
        let overrides = SchemaOverrides(entities: [
            "Task": .init(table: "todo", columns: ["title": "name", "category": "group_id"])
        ])
        let schema = try NewSchema(model: XCDataModelReader.read(path: Fixtures.demoModel), overrides: overrides)
        #expect(schema.entities["Task"]?.table == "todo")
        #expect(schema.entities["Task"]?.properties["title"] == .column("name", .text))
        #expect(schema.entities["Task"]?.properties["category"] == .toOne(column: "group_id", position: nil))
        let bad = SchemaOverrides(entities: ["Task": .init(table: "x; DROP TABLE ZTASK")])
        #expect(throws: SchemaError.self) {
            try NewSchema(model: XCDataModelReader.read(path: Fixtures.demoModel), overrides: bad)
        }
        let clash = SchemaOverrides(entities: ["Task": .init(table: "category")])
        #expect(throws: SchemaError.self) {
            try NewSchema(model: XCDataModelReader.read(path: Fixtures.demoModel), overrides: clash)
        }
    }

    /// Every fixture's model maps, and creating the schema in a copy touches no Core Data table.
    @Test(arguments: Fixtures.allStores) func createsBesideTheLegacyTables(fixture: String) throws {
        let directory = try TemporaryDirectory()
        let copy = try directory.copy(fixture)
        let query = "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name"
        let before = try RawSQLite.rows(copy, query)
        let beforeNames = Set(before.compactMap { $0[1].textValue })
        let legacyTables = Set(before.filter { $0[0] == .text("table") }.compactMap { $0[1].textValue })
        let legacy = try LegacyStore(path: copy)
        let model = try #require(legacy.model)
        let store = try NewStore(path: copy, model: model)
        let statements = try store.createSchema()
        #expect(!statements.isEmpty)
        #expect(try store.schemaExists())
        let after = try RawSQLite.rows(copy, query)
        #expect(after.filter { beforeNames.contains($0[1].textValue ?? "") } == before)
        let added = after.filter { !beforeNames.contains($0[1].textValue ?? "") }
        #expect(
            added.allSatisfy { !legacyTables.contains($0[2].textValue ?? "") },
            "nothing new is attached to a Core Data table"
        )
        #expect(try RawSQLite.rows(copy, "PRAGMA integrity_check")[0][0] == .text("ok"))
        #expect(try store.createSchema().filter { $0.hasPrefix("CREATE TABLE \"") || $0.hasPrefix("ALTER") }.isEmpty)
    }

    /// Photos with the new tables added still reads through the legacy store, and its history decodes.
    @Test func photosStillReadsWithTheNewTables() throws {
        let directory = try TemporaryDirectory()
        let copy = try directory.copy(Fixtures.photos)
        let model = try #require(try LegacyStore(path: copy).model)
        try NewStore(path: copy, model: model).createSchema()
        let legacy = try LegacyStore(path: copy)
        #expect(legacy.modelSource == .modelCache)
        let report = try StoreReport(store: legacy)
        #expect(report.history?.transactions == 410)
        #expect(report.history?.changes == HistorySummary.Changes(insert: 418, update: 1_731, delete: 81))
        #expect(
            try legacy.objects(of: "Asset").count
                == RawSQLite.rows(copy, "SELECT count(*) FROM ZASSET")[0][0].integerValue.map(Int.init)
        )
        let reader = try HistoryReader(store: legacy)
        let updates = try reader.transactions(after: 0, limit: 1_000).flatMap(\.changes).filter { $0.type == .update }
        #expect(updates.count == 1_731 && updates.allSatisfy { $0.properties != nil })
    }
}
