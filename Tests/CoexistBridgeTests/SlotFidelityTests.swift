import CoexistBridge
import CoexistHistory
import CoexistLegacyStore
import CoexistSQLite
import CoexistStore
import TestSupport
import Testing

/// What the bridge writes into a real Core Data store names a to-many with the slot Core Data's own saves
/// use for it (Photos 26.1: its inserts pin Person.detectedFaces).
@Suite struct SlotFidelityTests {
    /// A bridged copy of Photos 26.1: the bridge, its legacy schema, the face entity and Person.detectedFaces's slot.
    struct BridgedPhotos {
        let directory: TemporaryDirectory
        let bridge: SyncEngine
        let schema: StoreSchema
        let face: EntityMapping
        let slot: Int

        init() throws {
            directory = try TemporaryDirectory()
            let copy = try directory.copy(Fixtures.photos)
            bridge = try SyncEngine(connection: try Connection(path: copy), model: nil)
            #expect(try bridge.initialSyncIfNeeded())
            let model = try #require(bridge.legacy.model)
            schema = try #require(bridge.legacy.schema)
            let person = try #require(model.entity(named: "Person"))
            slot = try #require(bridge.legacy.bitmap(of: person)?.slots.firstIndex(of: "detectedFaces"))
            face = try #require(schema.entities.values.first { $0.table == "ZDETECTEDFACE" && $0.superNumber == 0 })
        }
    }

    @Test func aMirroredMoveWritesTheSlotCoreDataWrites() throws {
        let photos = try BridgedPhotos()
        let (bridge, schema, slot, face) = (photos.bridge, photos.schema, photos.slot, photos.face)
        let rows = try bridge.connection.rows(
            "SELECT Z_PK, ZPERSONFORFACE FROM ZDETECTEDFACE WHERE ZPERSONFORFACE IS NOT NULL ORDER BY Z_PK LIMIT 1"
        )
        let facePK = try #require(rows.first?[0].integerValue)
        let owner = try #require(rows.first?[1].integerValue)
        let other = try #require(
            try bridge.connection.scalar(
                "SELECT Z_PK FROM ZPERSON WHERE Z_PK != ? ORDER BY Z_PK LIMIT 1",
                [.integer(owner)]
            )
            .integerValue
        )
        let identity = { (entity: String, pk: Int64) throws -> String in
            let value = try bridge.connection.scalar(
                "SELECT id FROM coexist_identity WHERE entity = ? AND pk = ?",
                [.text(entity), .integer(pk)]
            )
            return try #require(value.textValue)
        }
        // The new side moves the face to another person; the bridge writes it into the Core Data tables.
        try bridge.new.save(SaveMetadata(author: "new-app")) { save in
            try save.setToOne(
                ObjectRef(entity: face.name, id: try identity(face.rootName, facePK)),
                "personForFace",
                ObjectRef(entity: "Person", id: try identity("Person", other))
            )
        }
        let before = try bridge.lastToken()
        _ = try bridge.catchUp()
        let personNumber = try #require(schema.entities["Person"]?.number)
        let bitmaps = try bridge.connection.rows(
            "SELECT c.ZENTITYPK, c.ZCOLUMNS FROM ACHANGE c JOIN ATRANSACTION t ON t.Z_PK = c.ZTRANSACTIONID "
                + "WHERE t.Z_PK > ? AND c.ZENTITY = ? ORDER BY c.ZENTITYPK",
            [.integer(before), .integer(Int64(personNumber))]
        )
        #expect(bitmaps.map { $0[0].integerValue } == [min(owner, other), max(owner, other)])
        for row in bitmaps {
            let bytes = try #require(row[1].blobValue)
            #expect(
                bytes[slot / 8] & (0x80 >> UInt8(slot % 8)) != 0,
                "bit \(slot), detectedFaces, as Core Data writes it"
            )
        }
        let report = try Verifier(engine: bridge).run()
        #expect(report.equal, "\(report.differences.prefix(5))")
    }

    /// The new side inserts a face for a person; the bridge writes the insert into the Core Data tables
    /// with the person's update setting the slot Core Data's own face inserts set.
    @Test func aMirroredChildInsertWritesTheSlotCoreDataWrites() throws {
        let photos = try BridgedPhotos()
        let (bridge, schema, slot, face) = (photos.bridge, photos.schema, photos.slot, photos.face)
        #expect(bridge.legacy.slotCalibration.evidence["Person"]?["detectedFaces"] == .observed(10))
        #expect(slot == 32, "the bit Photos' own face inserts set in their person's update")
        let owner = try #require(
            try bridge.connection.scalar("SELECT Z_PK FROM ZPERSON ORDER BY Z_PK LIMIT 1").integerValue
        )
        let ownerID = try #require(
            try bridge.connection.scalar(
                "SELECT id FROM coexist_identity WHERE entity = 'Person' AND pk = ?",
                [.integer(owner)]
            ).textValue
        )
        try bridge.new.save(SaveMetadata(author: "new-app")) { save in
            save.enforcesMandatoryValues = false
            let inserted = try save.insert(face.name)
            try save.setToOne(inserted, "personForFace", ObjectRef(entity: "Person", id: ownerID))
        }
        let before = try bridge.lastToken()
        let result = try bridge.catchUp()
        #expect(result.parked == 0, "\(result)")
        let personNumber = try #require(schema.entities["Person"]?.number)
        let rows = try bridge.connection.rows(
            "SELECT c.ZCHANGETYPE, c.ZENTITY, c.ZENTITYPK, c.ZCOLUMNS FROM ACHANGE c WHERE c.ZTRANSACTIONID > ? "
                + "ORDER BY c.Z_PK",
            [.integer(before)]
        )
        #expect(rows.contains { $0[0] == .integer(0) && $0[1] == .integer(Int64(face.number)) }, "the face inserted")
        let updates = rows.filter { $0[0] == .integer(1) && $0[1] == .integer(Int64(personNumber)) }
        #expect(updates.map { $0[2] } == [.integer(owner)], "\(rows)")
        for row in updates {
            let bytes = try #require(row[3].blobValue)
            #expect(
                bytes[slot / 8] & (0x80 >> UInt8(slot % 8)) != 0,
                "bit \(slot), detectedFaces, as Core Data writes it"
            )
        }
        let report = try Verifier(engine: bridge).run()
        #expect(report.equal, "\(report.differences.prefix(5))")
    }
}
