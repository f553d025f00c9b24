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
    @Test func aMirroredMoveWritesTheSlotCoreDataWrites() throws {
        let directory = try TemporaryDirectory()
        let copy = try directory.copy(Fixtures.photos)
        let bridge = try SyncEngine(connection: try Connection(path: copy), model: nil)
        #expect(try bridge.initialSyncIfNeeded())
        let legacy = bridge.legacy
        let model = try #require(legacy.model)
        let schema = try #require(legacy.schema)
        let person = try #require(model.entity(named: "Person"))
        let slot = try #require(legacy.bitmap(of: person)?.slots.firstIndex(of: "detectedFaces"))
        let face = try #require(schema.entities.values.first { $0.table == "ZDETECTEDFACE" && $0.superNumber == 0 })
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
}
