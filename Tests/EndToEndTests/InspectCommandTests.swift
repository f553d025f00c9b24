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
