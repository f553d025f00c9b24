import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import TestSupport
import Testing

@Suite struct StoreCreatorTests {
    @Test func demoStoreLooksLikeCoreDatas() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("Demo.sqlite")
        let model = try XCDataModelReader.read(path: Fixtures.demoModel)
        let store = try StoreCreator.create(path: path, model: model)
        #expect(store.metadata.storeType == "SQLite")
        #expect(store.metadata.modelVersionIdentifiers == ["2.0.0"])
        #expect(store.metadata.hashedEntityNames.isEmpty)
        #expect(try store.connection.scalar("PRAGMA auto_vacuum").integerValue == 2)
        #expect(try store.connection.scalar("PRAGMA journal_mode").textValue == "wal")
        #expect(try store.connection.scalar("PRAGMA integrity_check").textValue == "ok")
        let keys = try store.connection.rows("SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT")
        #expect(keys.map { $0[1].textValue } == ["Category", "Task", "CHANGE", "TRANSACTION", "TRANSACTIONSTRING"])
        #expect(keys.map { $0[0].integerValue } == [1, 2, 16001, 16002, 16003])
        let taskTable = try #require(store.tables["ZTASK"])
        #expect(taskTable.prefix(3) == ["Z_PK", "Z_ENT", "Z_OPT"])
        #expect(
            Set(taskTable) == [
                "Z_PK", "Z_ENT", "Z_OPT", "ZISCOMPLETED", "ZPRIORITY", "ZCATEGORY", "ZCREATEDAT", "ZNOTES", "ZTITLE",
                "ZID",
            ]
        )
        #expect(
            store.schema?.entities["Task"]?.properties["category"]
                == .toOne(column: "ZCATEGORY", entityColumn: nil, orderColumn: nil)
        )
        // A preserved attribute per entity (id) means one tombstone column.
        #expect(store.tables["ACHANGE"]?.contains("ZTOMBSTONE0") == true)
        #expect(store.tables["ACHANGE"]?.contains("ZTOMBSTONE1") == false)
    }

    /// The history tables' DDL equals what Core Data wrote in a real store.
    @Test func historyDDLEqualsRealStores() throws {
        let directory = try TemporaryDirectory()
        let model = try XCDataModelReader.read(path: Fixtures.sampleModelXcdatamodeld + "/SampleModel.xcdatamodel")
        let store = try StoreCreator.create(
            path: directory.file("S.sqlite"),
            model: model,
            options: .init(history: true)
        )
        let query =
            "SELECT name, sql FROM sqlite_master WHERE tbl_name IN ('ATRANSACTION','ATRANSACTIONSTRING') ORDER BY name"
        let ours = try store.connection.rows(query)
        let real = try RawSQLite.rows(Fixtures.sampleModel2V1, query)
        #expect(ours == real)
        #expect(ours.count == 9)
        let photosChange = try RawSQLite.rows(Fixtures.photos, "SELECT sql FROM sqlite_master WHERE name = 'ACHANGE'")[
            0
        ][0]
        // Photos gained ZTOMBSTONE4 and 5 later, by ALTER TABLE: its first four columns read as we write them.
        #expect(photosChange.textValue?.hasPrefix(String(HistoryDDL.changeTable(tombstones: 4).dropLast(2))) == true)
        let realChange = try RawSQLite.rows(
            Fixtures.sampleModel2V1,
            "SELECT sql FROM sqlite_master WHERE name = 'ACHANGE'"
        )[0][0]
        #expect(realChange == .text(HistoryDDL.changeTable(tombstones: 0)))
    }

    @Test func createdTablesMatchARealStoreOfTheSameModel() throws {
        let directory = try TemporaryDirectory()
        let model = try XCDataModelReader.read(path: Fixtures.sampleModelXcdatamodeld + "/SampleModel.xcdatamodel")
        let hashes = try VersionInfo.read(path: Fixtures.sampleModelVersionInfo).hashes["SampleModel"]
        let store = try StoreCreator.create(
            path: directory.file("S.sqlite"),
            model: model,
            options: .init(history: false, versionHashes: hashes)
        )
        let real = try LegacyStore(path: Fixtures.sampleModelV1)
        for (table, columns) in real.tables where table.hasPrefix("Z") && !table.hasPrefix("Z_") {
            #expect(Set(store.tables[table] ?? []) == Set(columns), "\(table)")
        }
        #expect(store.primaryKeys.map(\.name) == real.primaryKeys.map(\.name))
        #expect(store.primaryKeys.map(\.number) == real.primaryKeys.map(\.number))
        #expect(store.metadata.hashedEntityNames == real.metadata.hashedEntityNames)
        let indexQuery = "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name"
        #expect(try store.connection.rows(indexQuery) == RawSQLite.rows(Fixtures.sampleModelV1, indexQuery))
    }

    /// The schema objects `create` makes are the real stores', object by object (coexist's own `coexist_`
    /// tables aside): tables, column order and types, indexes with their collations, and uniqueness in the
    /// form of the store's framework version (a table constraint in Moody's 637, an index in 1044).
    @Test(arguments: [
        ("SampleModel.xcdatamodeld/SampleModel.xcdatamodel", "CoreDataPlus/SampleModel_V1.sqlite", 1_044),
        ("SampleModel.xcdatamodeld/SampleModel2.xcdatamodel", "CoreDataPlus/SampleModel_V2.sqlite", 1_044),
        ("../../objcio-core-data/model/Moody.xcdatamodeld/Moody.xcdatamodel", "objcio-core-data/Moody.moody", 637),
    ])
    func createdSchemaEqualsTheRealStores(_ modelPath: String, _ storePath: String, _ version: Int) throws {
        let directory = try TemporaryDirectory()
        let model = try XCDataModelReader.read(path: Fixtures.root + "/CoreDataPlus/model/" + modelPath)
        let store = try StoreCreator.create(
            path: directory.file("S.sqlite"),
            model: model,
            options: .init(history: false, frameworkVersion: version)
        )
        let query = """
            SELECT type, name, tbl_name, sql FROM sqlite_master
            WHERE name NOT LIKE 'sqlite_%' AND name NOT LIKE 'coexist_%' ORDER BY name
            """
        let ours = try store.connection.rows(query)
        let real = try RawSQLite.rows(Fixtures.root + "/" + storePath, query)
        #expect(ours.count == real.count)
        for (mine, theirs) in zip(ours, real) { #expect(mine == theirs) }
    }

    @Test func refusesToOverwrite() throws {
        let model = try XCDataModelReader.read(path: Fixtures.demoModel)
        #expect(throws: LegacyStoreError.self) { try StoreCreator.create(path: Fixtures.sampleModelV1, model: model) }
    }
}
