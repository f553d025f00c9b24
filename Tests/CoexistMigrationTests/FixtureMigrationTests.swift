import CoexistBridge
import CoexistConfiguration
import CoexistHistory
import CoexistLegacyStore
import CoexistMigration
import CoexistModel
import CoexistSQLite
import Foundation
import TestSupport
import Testing

/// Migrations of stores real Core Data wrote: CoreDataPlus SampleModel V1 → V2 → V3 (a renamed entity,
/// removed attributes, a new entity that renumbers the tree) and objc.io Moody's inferred first step.
@Suite struct FixtureMigrationTests {
    let sampleVersions: [XCDataModelReader.Version]
    let moodyVersions: [XCDataModelReader.Version]

    init() throws {
        sampleVersions = try XCDataModelReader.readVersions(path: Fixtures.sampleModelXcdatamodeld)
        moodyVersions = try XCDataModelReader.readVersions(path: Fixtures.moodyXcdatamodeld)
    }

    func schemaSQL(_ path: String) throws -> [String] {
        try RawSQLite.rows(
            path,
            "SELECT type || ' ' || name || ': ' || sql FROM sqlite_master WHERE sql IS NOT NULL AND tbl_name NOT LIKE "
                + "'coexist%' AND tbl_name NOT LIKE 'A%' AND tbl_name NOT IN ('Z_PRIMARYKEY', 'Z_METADATA', 'Z_MODELCACHE') "
                + "ORDER BY name"
        ).compactMap { $0[0].textValue }
    }

    @Test func sampleModelV1ToV3KeepsEveryRowAndEndsAsCreated() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.copy(Fixtures.sampleModelV1)
        let source = try directory.copy(Fixtures.sampleModelV1, as: "Source.sqlite")
        let info = try VersionInfo.read(path: Fixtures.sampleModelVersionInfo)
        let report = try Migrator.migrate(
            store: path,
            versions: sampleVersions,
            options: Migrator.Options(target: "SampleModel3", versionInfo: info)
        )
        #expect(report.steps.map(\.to) == ["SampleModel2", "SampleModel3"])
        #expect(report.warnings.isEmpty)

        // The legacy DDL is what `create` makes for V3 (same framework version as the store).
        let v3 = try #require(sampleVersions.last).model
        let created = try StoreCreator.create(
            path: directory.file("Created.sqlite"),
            model: v3,
            options: StoreCreator.Options(frameworkVersion: 1044)
        )
        #expect(try schemaSQL(path) == schemaSQL(created.path))
        #expect(try RawSQLite.rows(path, "PRAGMA integrity_check") == [[.text("ok")]])
        #expect(try RawSQLite.rows(path, "PRAGMA foreign_key_check").isEmpty)

        // Entities renumbered (Maker is new), rows kept with their keys; ExpensiveSportCar is now LuxuryCar.
        #expect(
            try RawSQLite.rows(path, "SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY WHERE Z_ENT < 16000 ORDER BY 1")
                == [
                    [.integer(1), .text("Car"), .integer(0)], [.integer(2), .text("SportCar"), .integer(1)],
                    [.integer(3), .text("LuxuryCar"), .integer(2)], [.integer(4), .text("Maker"), .integer(0)],
                    [.integer(5), .text("Person"), .integer(0)],
                ]
        )
        #expect(
            try RawSQLite.rows(path, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME IN ('Car', 'Person') ORDER BY Z_NAME")
                == RawSQLite.rows(
                    source,
                    "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME IN ('Car', 'Person') ORDER BY Z_NAME"
                )
        )
        #expect(
            try RawSQLite.rows(path, "SELECT Z_ENT, count(*) FROM ZCAR GROUP BY 1 ORDER BY 1")
                == RawSQLite.rows(source, "SELECT Z_ENT, count(*) FROM ZCAR GROUP BY 1 ORDER BY 1")
        )
        // Value by value: every column both versions have, every row by key.
        for table in ["ZCAR", "ZPERSON"] {
            let before = Set(
                try RawSQLite.rows(source, "SELECT name FROM pragma_table_info('\(table)')").compactMap {
                    $0[0].textValue
                }
            )
            let after = Set(
                try RawSQLite.rows(path, "SELECT name FROM pragma_table_info('\(table)')").compactMap {
                    $0[0].textValue
                }
            )
            let common = before.intersection(after).subtracting(["Z_ENT"]).sorted().joined(separator: ", ")
            let query = "SELECT \(common) FROM \(table) ORDER BY Z_PK"
            #expect(try RawSQLite.rows(path, query) == RawSQLite.rows(source, query), "\(table): \(common)")
        }
        // The store says V3, with the compiled hashes and their digest; the model cache is gone.
        let store = try LegacyStore(path: path)
        #expect(store.metadata.modelVersionIdentifiers == v3.versionIdentifiers)
        #expect(Set(store.metadata.hashedEntityNames) == Set(try #require(info.hashes["SampleModel3"]).keys))
        #expect(try RawSQLite.rows(path, "SELECT count(*) FROM Z_MODELCACHE") == [[.integer(0)]])
        #expect(store.model?.structuralDifferences(from: v3).isEmpty == true, "coexist_model holds V3")
        #expect(
            try RawSQLite.rows(path, "SELECT from_version, to_version FROM coexist_migration ORDER BY id") == [
                [.text("SampleModel"), .text("SampleModel2")], [.text("SampleModel2"), .text("SampleModel3")],
            ]
        )
        // The backup is the store as it was.
        let backup = try #require(report.backup)
        let old = try LegacyStore(path: backup)
        #expect(
            old.metadata.modelVersionIdentifiers == (try LegacyStore(path: source)).metadata.modelVersionIdentifiers
        )
        #expect(
            try RawSQLite.rows(backup, "SELECT count(*) FROM ZCAR")
                == RawSQLite.rows(source, "SELECT count(*) FROM ZCAR")
        )
    }

    /// History written under V1 (an update of an ExpensiveSportCar, a delete of a Person with its tombstone)
    /// still decodes after V1 → V3 with V1's names and layouts, though the entity was renamed and the
    /// tree renumbered; history written after decodes with V3's.
    @Test func historyFromBeforeDecodesWithItsVersion() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.copy(Fixtures.sampleModelV1)
        let store = try LegacyStore(path: path, options: OpenOptions())
        let car = try #require(try store.objects(of: "ExpensiveSportCar").first).id
        let person = try #require(try store.objects(of: "Person").last).id
        try store.save(SaveMetadata(author: "old-app")) { save in
            try save.update(car, ["isLimitedEdition": .boolean(true), "maker": .string("Lotus")])
        }
        try store.save(SaveMetadata(author: "old-app")) { save in try save.delete(person) }
        _ = try Migrator.migrate(
            store: path,
            versions: sampleVersions,
            options: Migrator.Options(target: "SampleModel3")
        )

        let migrated = try LegacyStore(path: path, options: OpenOptions())
        try migrated.save(SaveMetadata(author: "new-app")) { save in
            let luxury = ObjectID(entity: "LuxuryCar", pk: car.pk)
            try save.update(luxury, ["isLimitedEdition": .boolean(false)])
        }
        let transactions = try HistoryReader(store: try LegacyStore(path: path)).transactions(after: 0, limit: 10)
        #expect(transactions.count == 3)
        let update = try #require(transactions.first?.changes.first)
        #expect(update.entity == "ExpensiveSportCar")
        #expect(update.properties?.sorted() == ["isLimitedEdition", "maker"])
        let delete = try #require(transactions.dropFirst().first?.changes.first { $0.type == .delete })
        #expect(delete.entity == "Person")
        #expect(delete.tombstone["id"] != nil, "the V1 tombstone layout (Person.id is gone in V2)")
        let after = try #require(transactions.last?.changes.first)
        #expect(after.entity == "LuxuryCar")
        #expect(after.properties == ["isLimitedEdition"])
        #expect(try HistoryCheck(store: try LegacyStore(path: path)).passed)
    }

    @Test func moodyFirstStepRenamesAndAddsWithTheDefault() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.copy(Fixtures.moody)
        let source = try directory.copy(Fixtures.moody, as: "Source.moody")
        _ = try Migrator.migrate(store: path, versions: moodyVersions, options: Migrator.Options(target: "Moody 2"))
        let rating = try #require(
            moodyVersions[1].model.entity(named: "Mood")?.attributes.first { $0.name == "rating" }?.defaultValue
        )
        #expect(
            try RawSQLite.rows(path, "SELECT Z_PK, ZREMOTEID FROM ZMOOD ORDER BY Z_PK")
                == RawSQLite.rows(source, "SELECT Z_PK, ZREMOTEIDENTIFIER FROM ZMOOD ORDER BY Z_PK")
        )
        let ratings = try RawSQLite.rows(path, "SELECT DISTINCT ZRATING FROM ZMOOD")
        #expect(ratings.count == 1)
        if case .integer(let value) = rating { #expect(ratings == [[.integer(value)]]) }
        #expect(try RawSQLite.rows(path, "PRAGMA integrity_check") == [[.text("ok")]])
    }

    @Test func aDryRunLeavesTheStoreByteIdentical() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.copy(Fixtures.sampleModelV1)
        let before = try directory.contents()
        let report = try Migrator.migrate(
            store: path,
            versions: sampleVersions,
            options: Migrator.Options(target: "SampleModel3", dryRun: true)
        )
        #expect(report.steps.count == 2)
        #expect(report.steps.allSatisfy { step in step.parts.contains { !$0.statements.isEmpty } })
        #expect(report.backup == nil)
        #expect(try directory.contents() == before, "nothing created, nothing changed")
    }

    @Test(arguments: [1, 2])
    func aFailureAtAnyStepLeavesTheStoreAsItWas(_ step: Int) throws {
        let directory = try TemporaryDirectory()
        let path = try directory.copy(Fixtures.sampleModelV1)
        chmod(path, 0o600)
        let before = try #require(FileManager.default.contents(atPath: path))
        #expect(throws: MigrationError.self) {
            try Migrator.migrate(
                store: path,
                versions: sampleVersions,
                options: Migrator.Options(target: "SampleModel3", failAfterStep: step)
            )
        }
        #expect(FileManager.default.contents(atPath: path) == before, "byte-identical")
        let backups = try directory.contents().keys.filter { $0.contains(".backup-SampleModel-") }
        #expect(backups.count == 1)
        let backup = directory.file(try #require(backups.first))
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: backup)[.posixPermissions] as? Int)
        #expect(mode == 0o600, "the backup is no more readable than the store")
        #expect(try RawSQLite.rows(backup, "PRAGMA integrity_check") == [[.text("ok")]])
        #expect(
            try RawSQLite.rows(backup, "SELECT count(*) FROM ZCAR") == RawSQLite.rows(path, "SELECT count(*) FROM ZCAR")
        )
        // And the store still migrates afterwards.
        _ = try Migrator.migrate(
            store: path,
            versions: sampleVersions,
            options: Migrator.Options(target: "SampleModel3")
        )
    }

    /// objc.io Moody 1 → 2 (inferred) → 3 (mapping: `Mood.continent` from `$source.country.continent`) → 4
    /// (mapping: the abstract parent removed) → 5 (mapping: `Country.isoContinent` from the removed
    /// Continent's code), checked against `Moody 5.moody`, the store Core Data itself migrated from
    /// `Moody.moody`: the same DDL, the same values object by object (keys differ: Core Data's mapping
    /// migration gives new ones, coexist keeps them).
    @Test func moodyOneToFiveMatchesCoreDatasOwnMigration() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.copy(Fixtures.moody)
        let mappings = Migrator.mappingModels(beside: Fixtures.moodyXcdatamodeld, versions: moodyVersions)
        #expect(mappings.keys.sorted() == ["Moody 2→Moody 3", "Moody 3→Moody 4", "Moody 4→Moody 5", "Moody 5→Moody 6"])
        let report = try Migrator.migrate(
            store: path,
            versions: moodyVersions,
            options: Migrator.Options(target: "Moody 5", mappingModels: mappings)
        )
        #expect(
            report.steps.map { String($0.how.prefix(13)) } == [
                "inferred (lig", "mapping model", "mapping model", "mapping model",
            ]
        )
        #expect(try schemaSQL(path) == schemaSQL(Fixtures.moody5))
        let moods = """
            SELECT m.ZREMOTEID, m.ZRATING, m.ZDATE, m.ZLATITUDE, m.ZLONGITUDE, m.ZCREATORID, hex(m.ZCOLORS),
            m.ZMARKEDFORREMOTEDELETION, c.ZNUMERICISO3166CODE, c.ZISOCONTINENT
            FROM ZMOOD m LEFT JOIN ZCOUNTRY c ON c.Z_PK = m.ZCOUNTRY ORDER BY m.ZREMOTEID
            """
        #expect(try RawSQLite.rows(path, moods) == RawSQLite.rows(Fixtures.moody5, moods))
        let countries = """
            SELECT ZNUMERICISO3166CODE, ZISOCONTINENT, ZNUMBEROFMOODS, ZUPDATEDAT, ZUNIQUENESSDUMMY,
            ZMARKEDFORDELETIONDATE FROM ZCOUNTRY ORDER BY 1
            """
        #expect(try RawSQLite.rows(path, countries) == RawSQLite.rows(Fixtures.moody5, countries))
        #expect(try RawSQLite.rows(path, countries).count == 3)
        #expect(try RawSQLite.rows(path, "PRAGMA integrity_check") == [[.text("ok")]])
    }

    /// Moody 5 → 6 with a Swift stage standing in for `Country5ToCountry6Policy`: the mapping's own part
    /// runs as SQL, the stage re-creates the continents from the countries' codes through the adapter.
    @Test func aRegisteredStageRunsTheCustomPolicysPart() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.copy(Fixtures.moody5)
        let mappings = Migrator.mappingModels(beside: Fixtures.moodyXcdatamodeld, versions: moodyVersions)
        let stage = MigrationStage.custom(
            fromVersion: "Moody 5",
            toVersion: "Moody 6",
            standingInFor: ["Country5ToCountry6Policy"],
            willMigrate: { context in
                // What the policy reads from the source: kept for after the step, in this transaction.
                try context.connection.execute(
                    "CREATE TEMP TABLE moody_iso AS SELECT Z_PK AS pk, ZISOCONTINENT AS code FROM ZCOUNTRY"
                )
            },
            didMigrate: { context in
                let store = try context.legacyStore()
                let codes = try context.connection.rows("SELECT pk, code FROM temp.moody_iso ORDER BY pk")
                try store.save(SaveMetadata(author: "migration")) { save in
                    var continents: [Int64: ObjectID] = [:]
                    for row in codes {
                        guard let pk = row[0].integerValue, let code = row[1].integerValue else { continue }
                        let continent =
                            try continents[code]
                            ?? save.insert("Continent", ["numericISO3166Code": .integer(code)])
                        continents[code] = continent
                        try save.setToOne(ObjectID(entity: "Country", pk: pk), "continent", continent)
                    }
                }
                try context.connection.execute("DROP TABLE temp.moody_iso")
            }
        )
        let report = try Migrator.migrate(
            store: path,
            versions: moodyVersions,
            options: Migrator.Options(target: "Moody 6", mappingModels: mappings, stages: [stage])
        )
        #expect(report.steps.first?.how.hasSuffix("and a custom stage") == true)
        let joined = try RawSQLite.rows(
            path,
            "SELECT c.ZNUMERICISO3166CODE, k.ZNUMERICISO3166CODE FROM ZCOUNTRY c JOIN ZCONTINENT k ON k.Z_PK = c.ZCONTINENT ORDER BY 1"
        )
        let expected = try RawSQLite.rows(
            Fixtures.moody5,
            "SELECT ZNUMERICISO3166CODE, ZISOCONTINENT FROM ZCOUNTRY ORDER BY 1"
        )
        #expect(joined == expected, "every country linked to the continent of its old code")
        #expect(try RawSQLite.rows(path, "SELECT count(*) FROM ZCONTINENT") == [[.integer(2)]])
        #expect(
            try RawSQLite.rows(path, "SELECT count(*) FROM ZMOOD")
                == RawSQLite.rows(Fixtures.moody5, "SELECT count(*) FROM ZMOOD")
        )
        // The stage's save is in the history, after the step's record: it decodes with Moody 6.
        let last = try #require(
            try HistoryReader(store: try LegacyStore(path: path)).transactions(after: 0, limit: 10).last
        )
        #expect(last.author == "migration")
        #expect(Set(last.changes.compactMap(\.entity)) == ["Continent", "Country"])
    }

    /// Moody 5 → 6 runs a custom entity migration policy (code): refused, naming the class.
    @Test func aCustomPolicyWithoutAStageIsRefusedNamingIt() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.copy(Fixtures.moody5)
        let before = try directory.contents()
        let mappings = Migrator.mappingModels(beside: Fixtures.moodyXcdatamodeld, versions: moodyVersions)
        do {
            _ = try Migrator.migrate(
                store: path,
                versions: moodyVersions,
                options: Migrator.Options(target: "Moody 6", mappingModels: mappings)
            )
            Issue.record("a step with a custom policy ran without its stage")
        } catch let error as MigrationError {
            guard case .customPolicy(_, let step, let policy) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(step == "Moody 5 → Moody 6")
            #expect(policy.hasSuffix("Country5ToCountry6Policy"))
        }
        #expect(try directory.contents() == before)
    }

    @Test func aStepCoreDataCannotInferIsRefusedWithTheReason() throws {
        let directory = try TemporaryDirectory()
        let folder = try Self.itemModels(in: directory, types: ("Integer 16", "String"))
        let versions = try XCDataModelReader.readVersions(path: folder)
        let store = try StoreCreator.create(path: directory.file("Items.sqlite"), model: versions[0].model)
        let path = store.path
        let before = try #require(FileManager.default.contents(atPath: path))
        do {
            _ = try Migrator.migrate(store: path, versions: versions)
            Issue.record("the type change was migrated")
        } catch let error as MigrationError {
            #expect("\(error)".contains("Item.count changes type"), "\(error)")
        }
        #expect(FileManager.default.contents(atPath: path) == before)
    }

    /// A declared transform (the configuration's `[migration FROM -> TO]`) covers a step Core Data could not
    /// infer: `Item.count` becomes a String, filled from the old integer; a constant for another property.
    @Test func aDeclaredTransformCoversATypeChange() throws {
        let directory = try TemporaryDirectory()
        let folder = try Self.itemModels(in: directory, types: ("Integer 16", "String"))
        let versions = try XCDataModelReader.readVersions(path: folder)
        let store = try StoreCreator.create(path: directory.file("Items.sqlite"), model: versions[0].model)
        try store.save(SaveMetadata(author: "app")) { save in
            _ = try save.insert("Item", ["count": .integer(12)])
        }
        let configuration = try DaemonConfiguration.parse(
            "database = \(store.path)\n[migration Items -> Items 2]\nItem.count = $source.count\n",
            file: "test.conf"
        )
        #expect(configuration.transforms.first?.assignments.first?.value == .keyPath(["count"]))
        let report = try Migrator.migrate(
            store: store.path,
            versions: versions,
            options: Migrator.Options(transforms: configuration.transforms)
        )
        #expect(report.steps.first?.how.hasSuffix("and a declared transform") == true)
        #expect(try RawSQLite.rows(store.path, "SELECT ZCOUNT FROM ZITEM") == [[.text("12")]], "a String now")
        // A value that is neither a key path nor a constant is refused at parse time, naming the line.
        #expect(throws: ConfigError.self) {
            try DaemonConfiguration.parse("[migration Items -> Items 2]\nItem.count = count + 1\n", file: "bad.conf")
        }
        // A transform answers only for what it sets: one for another property leaves the step refused.
        let other = try DaemonConfiguration.parse("[migration Items -> Items 2]\nItem.label = 1\n", file: "other.conf")
        let refused = try StoreCreator.create(path: directory.file("Refused.sqlite"), model: versions[0].model)
        #expect(throws: MigrationError.self) {
            try Migrator.migrate(
                store: refused.path,
                versions: versions,
                options: Migrator.Options(transforms: other.transforms)
            )
        }
        #expect(StepTransform.expression(parsing: "\"a \\\"b\\\"\"") == .constant(.string("a \"b\"")))
    }

    /// A many-to-many (Item.tags ↔ Tag.items, join tables on both sides) kept across a step that adds an
    /// attribute: every pair still there on both sides, the bridge equal afterwards.
    @Test func manyToManyPairsAreKeptOnBothSides() throws {
        let directory = try TemporaryDirectory()
        let folder = try Self.models(in: directory, name: "Tags") { index in
            let rank =
                index == 0 ? "" : "<attribute name=\"rank\" attributeType=\"Integer 32\" defaultValueString=\"5\"/>"
            return """
                <entity name="Item" representedClassName="Item" syncable="YES">
                    <attribute name="id" attributeType="UUID"/>
                    <attribute name="title" optional="YES" attributeType="String"/>
                    \(rank)
                    <relationship name="tags" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Tag" inverseName="items" inverseEntity="Tag"/>
                </entity>
                <entity name="Tag" representedClassName="Tag" syncable="YES">
                    <attribute name="id" attributeType="UUID"/>
                    <attribute name="label" optional="YES" attributeType="String"/>
                    <relationship name="items" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Item" inverseName="tags" inverseEntity="Item"/>
                </entity>
                """
        }
        let versions = try XCDataModelReader.readVersions(path: folder)
        let store = try StoreCreator.create(path: directory.file("Tags.sqlite"), model: versions[0].model)
        try store.save(SaveMetadata(author: "app")) { save in
            let tags = try (1...3).map { index in
                try save.insert("Tag", ["id": DemoStore.uuid(UInt8(index)), "label": .string("tag \(index)")])
            }
            for index in 1...4 {
                let item = try save.insert(
                    "Item",
                    ["id": DemoStore.uuid(UInt8(10 + index)), "title": .string("item \(index)")]
                )
                try save.add(item, to: "tags", Array(tags.prefix(index % 3 + 1)))
            }
        }
        let bridge = try SyncEngine(connection: try Connection(path: store.path), model: versions[0].model)
        try bridge.initialSyncIfNeeded()
        _ = try bridge.catchUp()
        let join = try #require(
            try store.connection.rows(
                "SELECT name FROM sqlite_master WHERE name LIKE 'Z\\_%' ESCAPE '\\' AND type = 'table' AND name NOT IN ('Z_PRIMARYKEY', 'Z_METADATA', 'Z_MODELCACHE')"
            ).first?[0].textValue
        )
        let newJoin = try #require(bridge.new.schema.tables.first { $0.rootEntity == nil }?.name)
        let before = try RawSQLite.rows(store.path, "SELECT * FROM \(join) ORDER BY 1, 2")
        let newBefore = try RawSQLite.rows(store.path, "SELECT * FROM \(newJoin) ORDER BY 1, 2")
        #expect(before.count == 8)
        _ = try Migrator.migrate(store: store.path, versions: versions)
        #expect(try RawSQLite.rows(store.path, "SELECT * FROM \(join) ORDER BY 1, 2") == before)
        #expect(try RawSQLite.rows(store.path, "SELECT * FROM \(newJoin) ORDER BY 1, 2") == newBefore)
        #expect(try RawSQLite.rows(store.path, "SELECT DISTINCT ZRANK FROM ZITEM") == [[.integer(5)]])
        let after = try SyncEngine(connection: try Connection(path: store.path), model: versions[1].model)
        let report = try Verifier(engine: after).run()
        #expect(report.equal, "\(report.differences.prefix(3))")
    }

    /// A version that preserves one more attribute after deletion: `ACHANGE` gains the tombstone column, and
    /// a delete from before still decodes its tombstone with its own version's layout.
    @Test func tombstoneColumnsGrowAndOldTombstonesDecode() throws {
        let directory = try TemporaryDirectory()
        let folder = try Self.models(in: directory, name: "Notes") { index in
            let preserved = index == 0 ? "" : #" preserveAfterDeletion="YES""#
            return """
                <entity name="Note" representedClassName="Note" syncable="YES">
                    <attribute name="id" attributeType="UUID" preserveAfterDeletion="YES"/>
                    <attribute name="title" optional="YES" attributeType="String"\(preserved)/>
                </entity>
                """
        }
        let versions = try XCDataModelReader.readVersions(path: folder)
        let store = try StoreCreator.create(path: directory.file("Notes.sqlite"), model: versions[0].model)
        var note = ObjectID(entity: "Note", pk: 0)
        try store.save(SaveMetadata(author: "app")) { save in
            note = try save.insert("Note", ["id": DemoStore.uuid(7), "title": .string("gone")])
        }
        try store.save(SaveMetadata(author: "app")) { save in try save.delete(note) }
        let columns = {
            try RawSQLite.rows(
                store.path,
                "SELECT name FROM pragma_table_info('ACHANGE') WHERE name LIKE 'ZTOMBSTONE%'"
            ).count
        }
        #expect(try columns() == 1)
        _ = try Migrator.migrate(store: store.path, versions: versions)
        #expect(try columns() == 2)
        let deleted = try #require(
            try HistoryReader(store: try LegacyStore(path: store.path)).transactions(after: 0, limit: 10).last?.changes
                .first
        )
        #expect(deleted.type == .delete)
        #expect(deleted.tombstone == ["id": DemoStore.uuid(7)], "V1 preserved only the id")
    }

    /// An `.xcdatamodeld` of two versions of one entity `Item` whose attribute `count` has the given types.
    static func itemModels(in directory: TemporaryDirectory, types: (String, String)) throws -> String {
        try models(
            in: directory,
            name: "Items",
            entities: { index in
                """
                <entity name="Item" representedClassName="Item" syncable="YES">
                    <attribute name="count" optional="YES" attributeType="\(index == 0 ? types.0 : types.1)"/>
                </entity>
                """
            }
        )
    }

    /// An `.xcdatamodeld` named `name` of two versions (`name`, `name 2`, the second current) whose
    /// `<entity>` elements `entities` gives for version index 0 and 1.
    static func models(in directory: TemporaryDirectory, name: String, entities: (Int) -> String) throws -> String {
        let folder = directory.file("\(name).xcdatamodeld")
        for (index, version) in [name, name + " 2"].enumerated() {
            try FileManager.default.createDirectory(
                atPath: folder + "/\(version).xcdatamodel",
                withIntermediateDirectories: true
            )
            let contents = """
                <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
                <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" userDefinedModelVersionIdentifier="\(version)">
                \(entities(index))
                </model>
                """
            try Data(contents.utf8).write(to: URL(fileURLWithPath: folder + "/\(version).xcdatamodel/contents"))
        }
        let marker = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>\(name) 2.xcdatamodel</string></dict></plist>
            """
        try Data(marker.utf8).write(to: URL(fileURLWithPath: folder + "/.xccurrentversion"))
        return folder
    }
}
