import CoexistHistory
import CoexistLegacyStore
import TestSupport
import Testing

@Suite struct StoreReportTests {
    /// Row counts per entity equal `SELECT count(*) … WHERE Z_ENT = n`, for every fixture.
    @Test(arguments: Fixtures.allStores) func rowCountsMatchRawCounts(store: String) throws {
        let report = try StoreReport(store: LegacyStore(path: store))
        #expect(!report.entities.isEmpty)
        for entity in report.entities {
            let table = try #require(entity.table, "\(entity.name) has no table")
            #expect(entity.rows == (try RawSQLite.count(store, table: table, entity: entity.number)), "\(entity.name)")
        }
        let total = report.entities.reduce(0) { $0 + $1.rows }
        #expect(total > 0)
    }

    @Test func photosHistoryCounts() throws {
        let report = try StoreReport(store: LegacyStore(path: Fixtures.photos))
        let history = try #require(report.history)
        #expect(history.transactions == 410)
        #expect(history.changes == HistorySummary.Changes(insert: 418, update: 1_731, delete: 81))
        #expect(history.firstToken == 1)
        #expect(history.lastToken == 410)
        #expect(history.authors.contains { $0.hasPrefix("com.apple.coredata.schemamigrator") })
    }

    @Test func sampleModel2HistoryCounts() throws {
        let report = try StoreReport(store: LegacyStore(path: Fixtures.sampleModel2V1))
        let history = try #require(report.history)
        #expect(history.transactions == 1)
        #expect(history.changes.insert + history.changes.update + history.changes.delete == 5_468)
        #expect(report.entities.first { $0.name == "Page" }?.rows == 4_970)
    }

    @Test func storesWithoutHistoryReportNone() throws {
        let report = try StoreReport(store: LegacyStore(path: Fixtures.sampleModelV1))
        #expect(report.history == nil)
        #expect(report.entities.map(\.name) == ["Car", "SportCar", "ExpensiveSportCar", "Person"])
        #expect(report.entities.map(\.rows) == [115, 5, 5, 20])
    }
}
