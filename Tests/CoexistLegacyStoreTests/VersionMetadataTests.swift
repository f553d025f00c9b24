import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import TestSupport
import Testing

/// What a migration writes to `Z_METADATA`: the hashes digest as Core Data computes it, checked against
/// real stores, and the plist rewritten without inventing anything.
@Suite struct VersionMetadataTests {
    func plist(_ path: String) throws -> [String: PropertyListValue] {
        let rows = try RawSQLite.rows(path, "SELECT Z_PLIST FROM Z_METADATA")
        let bytes = try #require(rows.first?.first?.blobValue)
        return try #require(try BinaryPropertyList.decode(bytes).dictionary)
    }

    func hashes(_ plist: [String: PropertyListValue]) throws -> [String: [UInt8]] {
        let dictionary = try #require(plist["NSStoreModelVersionHashes"]?.dictionary)
        return dictionary.compactMapValues(\.data)
    }

    @Test(arguments: [Fixtures.sampleModelV1, Fixtures.sampleModelV2, Fixtures.sampleModel2V1, Fixtures.photos])
    func digestMatchesCoreDatas(_ store: String) throws {
        let metadata = try plist(store)
        let digest = try #require(metadata["NSStoreModelVersionHashesDigest"]?.string)
        #expect(StoreMetadata.hashesDigest(try hashes(metadata)) == digest)
    }

    @Test func migratedPlistKeepsTheOtherKeysAndRecomputesTheDigest() throws {
        let rows = try RawSQLite.rows(Fixtures.sampleModelV1, "SELECT Z_PLIST FROM Z_METADATA")
        let bytes = try #require(rows.first?.first?.blobValue)
        let before = try plist(Fixtures.sampleModelV1)
        let info = try VersionInfo.read(path: Fixtures.sampleModelVersionInfo)
        let target = try #require(info.hashes["SampleModel3"])
        let migrated = try #require(
            try BinaryPropertyList.decode(
                StoreMetadata.migratedPlist(bytes, versionIdentifiers: ["3"], hashes: target, path: "store")
            ).dictionary
        )
        #expect(migrated["NSStoreModelVersionIdentifiers"] == .array([.string("3")]))
        #expect(try hashes(migrated) == target)
        #expect(migrated["NSStoreModelVersionHashesDigest"] == .string(StoreMetadata.hashesDigest(target)))
        for key in before.keys
        where !["NSStoreModelVersionIdentifiers", "NSStoreModelVersionHashes", "NSStoreModelVersionHashesDigest"]
            .contains(key)
        {
            #expect(migrated[key] == before[key], "\(key) kept")
        }
        // Without a compiled model the old hashes go: new ones are never invented.
        let bare = try #require(
            try BinaryPropertyList.decode(
                StoreMetadata.migratedPlist(bytes, versionIdentifiers: ["3"], hashes: nil, path: "store")
            ).dictionary
        )
        #expect(bare["NSStoreModelVersionHashes"] == nil)
        #expect(bare["NSStoreModelVersionHashesDigest"] == nil)
        #expect(bare["NSStoreModelVersionHashesVersion"] == nil)
        #expect(bare["NSStoreType"] == before["NSStoreType"])
        #expect(throws: LegacyStoreError.self) {
            try StoreMetadata.migratedPlist([1, 2, 3], versionIdentifiers: [], hashes: nil, path: "store")
        }
    }

    /// The layout a migration targets is the one `create` makes, property by property.
    @Test(arguments: ["SampleModel", "SampleModel2", "SampleModel3"])
    func plannedLayoutIsTheCreatedStores(_ version: String) throws {
        let versions = try XCDataModelReader.readVersions(path: Fixtures.sampleModelXcdatamodeld)
        let model = try #require(versions.first { $0.name == version }).model
        let directory = try TemporaryDirectory()
        let store = try StoreCreator.create(
            path: directory.file("Created.sqlite"),
            model: model,
            options: StoreCreator.Options(frameworkVersion: 1044)
        )
        let layout = try PlannedLayout(model: model, frameworkVersion: 1044)
        let created = try #require(store.schema)
        #expect(layout.schema.entities == created.entities)
        #expect(layout.primaryKeys.map(\.name) == store.primaryKeys.filter { $0.number < 16000 }.map(\.name))
        let sql = try RawSQLite.rows(
            store.path,
            "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND (tbl_name LIKE 'Z%' AND tbl_name NOT IN "
                + "('Z_PRIMARYKEY', 'Z_METADATA', 'Z_MODELCACHE'))"
        ).compactMap { $0[0].textValue }
        #expect(Set(sql) == Set(layout.statements))
    }
}

/// Which model version a history row was written under, and its entity number then, across migrations
/// that renumber and remove entities.
@Suite struct HistoryEraTests {
    func era(_ id: Int64, last: Int64, numbers: [String: Int], renumbering: [Int: Int]) -> HistoryEra {
        HistoryEra(
            id: id,
            fromVersion: "V\(id)",
            toVersion: "V\(id + 1)",
            lastToken: last,
            model: Model(entities: [], source: "test"),
            numbers: numbers,
            renumbering: renumbering,
            slotOrders: [:]
        )
    }

    @Test func rowsResolveToTheirVersionsNumbers() {
        // V1 → V2: Car 1, Person 2 → Car 1, Maker 2 (new), Person 3. V2 → V3: Maker removed, Person 3 → 2.
        let eras = [
            era(1, last: 10, numbers: ["Car": 1, "Person": 2], renumbering: [1: 1, 2: 3]),
            era(2, last: 20, numbers: ["Car": 1, "Maker": 2, "Person": 3], renumbering: [1: 1, 3: 2]),
        ]
        // A Person row of V1 (token 5) now reads 2 (renumbered twice): it was entity 2 then.
        #expect(HistoryEras.resolve(number: 2, token: 5, in: eras).map { [$0.era, $0.number] } == [0, 2])
        // A Person row of V2 (token 15): entity 3 then.
        #expect(HistoryEras.resolve(number: 2, token: 15, in: eras).map { [$0.era, $0.number] } == [1, 3])
        // A Maker row of V2, removed by the second migration.
        let removed = HistoryEras.removedNumber(2, migration: 2)
        #expect(removed < 0)
        #expect(HistoryEras.resolve(number: removed, token: 15, in: eras).map { [$0.era, $0.number] } == [1, 2])
        // Rows of the current version resolve to nothing: they decode with the current model.
        #expect(HistoryEras.resolve(number: 2, token: 21, in: eras) == nil)
    }
}
