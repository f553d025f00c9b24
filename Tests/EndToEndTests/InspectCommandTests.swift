import Foundation
import TestSupport
import Testing

/// `coexistctl inspect` run as a real process against the real fixtures.
@Suite struct InspectCommandTests {
    func inspectJSON(_ arguments: [String]) throws -> [String: Any] {
        let result = try ProductProcess.run("coexistctl", ["inspect", "--json"] + arguments)
        #expect(result.status == 0, "\(result.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
        return try #require(object as? [String: Any])
    }

    @Test(arguments: Fixtures.allStores) func rowCountsEqualRawCounts(store: String) throws {
        let report = try inspectJSON([store])
        let entities = try #require(report["entities"] as? [[String: Any]])
        #expect(!entities.isEmpty)
        for entity in entities {
            let table = try #require(entity["table"] as? String)
            let number = try #require(entity["number"] as? Int)
            #expect(entity["rows"] as? Int == (try RawSQLite.count(store, table: table, entity: number)))
            #expect(entity["name"] is String)
            #expect(entity.keys.contains("parent"))
        }
    }

    @Test func photosHistoryFromACopy() throws {
        let directory = try TemporaryDirectory()
        let copy = try directory.copy(Fixtures.photos)
        let history = try #require(inspectJSON([copy])["history"] as? [String: Any])
        #expect(history["transactions"] as? Int == 410)
        let changes = try #require(history["changes"] as? [String: Int])
        #expect(changes == ["insert": 418, "update": 1_731, "delete": 81])
        #expect(history["firstToken"] as? Int == 1)
        #expect(history["lastToken"] as? Int == 410)
        #expect((history["authors"] as? [String])?.isEmpty == false)
    }

    @Test func sampleModel2History() throws {
        let history = try #require(inspectJSON([Fixtures.sampleModel2V1])["history"] as? [String: Any])
        #expect(history["transactions"] as? Int == 1)
        let changes = try #require(history["changes"] as? [String: Int])
        #expect(changes.values.reduce(0, +) == 5_468)
    }

    @Test func historyIsNullWithoutHistoryTables() throws {
        let report = try inspectJSON([Fixtures.moody])
        #expect(report["history"] is NSNull)
    }

    @Test func explicitModelFile() throws {
        let report = try inspectJSON([
            Fixtures.sampleModelV1, "--model", Fixtures.sampleModelXcdatamodeld + "/SampleModel.xcdatamodel",
        ])
        #expect((report["modelSource"] as? String)?.hasSuffix("SampleModel.xcdatamodel") == true)
        #expect((report["relationships"] as? [[String: Any]])?.count == 2)
    }

    @Test func textOutputNamesTheStore() throws {
        let result = try ProductProcess.run("coexistctl", ["inspect", Fixtures.sampleModelV1])
        #expect(result.status == 0)
        #expect(result.stdout.contains("uuid        753753D3-A961-4901-AB05-8CC48B1D3853"))
        #expect(result.stdout.contains("ExpensiveSportCar"))
    }
}

/// `inspect --check-history` and `--slots`: how faithfully a store's history decodes, read only.
@Suite struct HistoryCheckCommandTests {
    /// Every fixture's history decodes with the layout (exit 0), and checking writes nothing.
    @Test(arguments: Fixtures.allStores) func everyFixturePassesAndStaysUntouched(store: String) throws {
        let directory = try TemporaryDirectory()
        let copy = try directory.copy(store)
        let before = try directory.contents()
        let result = try ProductProcess.run("coexistctl", ["inspect", copy, "--check-history"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.hasPrefix("history check passed"), "\(result.stdout)")
        #expect(try directory.contents() == before, "read means read")
    }

    /// A bitmap one byte short, and one with a slot past the entity's last property: exit 1, both named.
    @Test func aBitmapThatDoesNotFitFails() throws {
        let directory = try TemporaryDirectory()
        let copy = try directory.copy(Fixtures.photos)
        try RawSQLite.execute(
            copy,
            """
            UPDATE ACHANGE SET ZCOLUMNS = substr(ZCOLUMNS, 2) WHERE Z_PK = 472;
            UPDATE ACHANGE SET ZCOLUMNS = x'ff'
            WHERE Z_PK = (SELECT min(Z_PK) FROM ACHANGE WHERE ZCHANGETYPE = 1 AND length(ZCOLUMNS) = 1);
            """
        )
        let result = try ProductProcess.run("coexistctl", ["inspect", copy, "--check-history", "--json"])
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(report["wrongLength"] as? Int == 1, "\(report)")
        #expect(report["pastTheEnd"] as? Int == 1, "an entity of fewer than 8 slots, every bit set: \(report)")
        #expect((report["examples"] as? [String])?.contains { $0.hasPrefix("change 472 ") } == true, "\(report)")
    }

    /// Photos 26.1: Folder.childCollections takes bit 29, its only one-to-many; Person.detectedFaces is pinned
    /// by the store's own inserts.
    @Test func slotsShowTheLayoutAndWhatIsKnown() throws {
        let result = try ProductProcess.run("coexistctl", ["inspect", Fixtures.photos, "--slots"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        let folder = try #require(lines.first { $0.hasPrefix("Folder (4 bytes): ") })
        #expect(folder.contains("29 childCollections [inferred]"), "\(folder)")
        let person = try #require(lines.first { $0.hasPrefix("Person (") })
        #expect(person.contains("detectedFaces [observed (10 inserts)]"), "\(person)")
    }

    /// `--slots` reads only; `--slots --calibrate` keeps what the history shows in the store.
    @Test func calibrateKeepsTheSlotsInTheStore() throws {
        let directory = try TemporaryDirectory()
        let copy = try directory.copy(Fixtures.photos)
        let before = try directory.contents()
        #expect(try ProductProcess.run("coexistctl", ["inspect", copy, "--slots"]).status == 0)
        #expect(try directory.contents() == before, "read means read")
        let refused = try ProductProcess.run("coexistctl", ["inspect", copy, "--calibrate"])
        #expect(refused.status == 64, "\(refused.stderr)")
        let kept = try ProductProcess.run("coexistctl", ["inspect", copy, "--slots", "--calibrate"])
        #expect(kept.status == 0, "\(kept.stderr)")
        let rows = try RawSQLite.rows(
            copy,
            "SELECT evidence, observations FROM coexist_slot_order WHERE entity = 'Person' AND relationship = 'detectedFaces'"
        )
        #expect(rows == [[.text("observed"), .integer(10)]])
    }
}
