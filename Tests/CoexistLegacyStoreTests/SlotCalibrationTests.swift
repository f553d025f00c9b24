import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import TestSupport
import Testing

/// The one-to-many slots of a store are learnt from its own history (coredata-sqlite-format.md §4.3): where
/// Core Data's child inserts pin the slot of a to-many, coexist reads that slot as that relationship, and
/// writes it there.
@Suite struct SlotCalibrationTests {
    /// Every child insert that updated its parent in the same transaction, by (parent entity, inverse
    /// to-many): the parent update's change id. Straight from the rows: the child's foreign key names the
    /// parent.
    static func childInserts(_ store: LegacyStore) throws -> [String: [Int64]] {
        let model = try #require(store.model)
        let schema = try #require(store.schema)
        var found: [String: [Int64]] = [:]
        for child in model.entities where !child.isAbstract {
            guard let mapping = schema.entities[child.name] else { continue }
            for relationship in model.allRelationships(of: child) where !relationship.isToMany {
                guard let inverse = model.inverse(of: relationship), inverse.isToMany,
                    case .toOne(let column, _, _)? = mapping.properties[relationship.name],
                    let destination = model.entity(named: relationship.destination)
                else { continue }
                for parent in model.hierarchy(from: destination) where !parent.isAbstract {
                    guard let number = schema.entities[parent.name]?.number else { continue }
                    let rows = try store.connection.rows(
                        """
                        SELECT DISTINCT p.Z_PK FROM ACHANGE c
                        JOIN ACHANGE p ON p.ZTRANSACTIONID = c.ZTRANSACTIONID AND p.ZCHANGETYPE = 1 AND p.ZENTITY = ?2
                        JOIN \(mapping.table) t ON t.Z_PK = c.ZENTITYPK AND t.\(column) = p.ZENTITYPK
                        WHERE c.ZCHANGETYPE = 0 AND c.ZENTITY = ?1
                        """,
                        [.integer(Int64(mapping.number)), .integer(Int64(number))]
                    )
                    found[parent.name + "." + inverse.name, default: []] += rows.compactMap { $0[0].integerValue }
                }
            }
        }
        return found
    }

    @Test func photosChildInsertsPinTheInverseToManys() throws {
        let store = try LegacyStore(path: Fixtures.photos)
        let calibration = store.slotCalibration
        #expect(calibration.conflicts.isEmpty, "\(calibration.conflicts)")
        let changes = Dictionary(
            try HistoryReaderTests.allTransactions(Fixtures.photos).flatMap(\.changes).map { ($0.changeID, $0) },
            uniquingKeysWith: { first, _ in first }
        )
        var pinned = 0
        for (pair, updates) in try Self.childInserts(store).sorted(by: { $0.key < $1.key }) where !updates.isEmpty {
            let parts = pair.split(separator: ".").map(String.init)
            switch calibration.evidence[parts[0]]?[parts[1]] {
            case .observed?, .inferred?: pinned += 1
            default: continue
            }
            for id in updates {
                #expect(
                    changes[id]?.properties?.contains(parts[1]) == true,
                    "\(pair): change \(id) reads \(changes[id]?.properties ?? [])"
                )
            }
        }
        #expect(
            pinned == 7,
            "the pairs the inserts pin (Asset.albumsBeingCustomKeyAsset's one update sets two candidates)"
        )
        let model = try #require(store.model)
        let folderEntity = try #require(model.entity(named: "Folder"))
        let folder = try #require(store.bitmap(of: folderEntity))
        #expect(folder.slots.firstIndex(of: "childCollections") == 29, "49 of 49 album inserts set bit 29")
        #expect(calibration.evidence["Person"]?["detectedFaces"] == .observed(10))
        #expect(calibration.evidence["Folder"]?["childCollections"] == .inferred)
    }

    /// Moving a face to another person updates both persons with the slot Core Data's inserts use.
    @Test func aMovedChildWritesTheSlotCoreDataWrites() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.copy(Fixtures.photos)
        let store = try LegacyStore(path: path, options: OpenOptions(access: .readWrite))
        let model = try #require(store.model)
        let person = try #require(model.entity(named: "Person"))
        let slot = try #require(store.bitmap(of: person)?.slots.firstIndex(of: "detectedFaces"))
        let rows = try store.connection.rows(
            "SELECT Z_PK, ZPERSONFORFACE FROM ZDETECTEDFACE WHERE ZPERSONFORFACE IS NOT NULL LIMIT 1"
        )
        let face = try #require(rows.first?[0].integerValue)
        let owner = try #require(rows.first?[1].integerValue)
        let other = try #require(
            try store.connection.scalar("SELECT Z_PK FROM ZPERSON WHERE Z_PK != ? LIMIT 1", [.integer(owner)])
                .integerValue
        )
        let faceEntity = try #require(
            store.schema?.entities.values.first { $0.table == "ZDETECTEDFACE" && $0.superNumber == 0 }
        )
        let saved = try store.save(SaveMetadata(author: "test")) { save in
            try save.setToOne(
                ObjectID(entity: faceEntity.name, pk: face),
                "personForFace",
                ObjectID(entity: "Person", pk: other)
            )
        }
        let token = try #require(saved.token)
        let personNumber = try #require(store.schema?.entities["Person"]?.number)
        let bitmaps = try store.connection.rows(
            "SELECT ZCOLUMNS FROM ACHANGE WHERE ZTRANSACTIONID = ? AND ZENTITY = ? ORDER BY ZENTITYPK",
            [.integer(token), .integer(Int64(personNumber))]
        )
        #expect(bitmaps.count == 2)
        for row in bitmaps {
            let bytes = try #require(row[0].blobValue)
            #expect(bytes[slot / 8] & (0x80 >> UInt8(slot % 8)) != 0, "bit \(slot) (detectedFaces) set")
        }
    }

    /// What was learnt is kept in the store and outlives the history it came from (pruning removes it).
    @Test func keptCalibrationOutlivesTheHistory() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.copy(Fixtures.photos)
        let store = try LegacyStore(path: path, options: OpenOptions(access: .readWrite))
        let model = try #require(store.model)
        let person = try #require(model.entity(named: "Person"))
        let before = try #require(store.bitmap(of: person)).slots
        try store.connection.write { try store.keepCalibration() }
        try store.connection.execute("DELETE FROM ACHANGE")
        #expect(store.learntCalibration().evidence["Person"]?["detectedFaces"] == .unknown, "no evidence left")
        let reopened = try LegacyStore(path: path)
        #expect(reopened.slotCalibration.evidence["Person"]?["detectedFaces"] == .observed(10))
        #expect(reopened.bitmap(of: person)?.slots == before)
        // Keeping again with no evidence left loses nothing.
        let writable = try LegacyStore(path: path, options: OpenOptions(access: .readWrite))
        try writable.connection.write { try writable.keepCalibration() }
        #expect(try LegacyStore(path: path).slotCalibration == reopened.slotCalibration)
    }
}
