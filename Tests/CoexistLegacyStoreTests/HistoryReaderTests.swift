import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import TestSupport
import Testing

@Suite struct HistoryReaderTests {
    static func allTransactions(_ path: String) throws -> [HistoryTransaction] {
        let reader = try HistoryReader(store: LegacyStore(path: path))
        var result: [HistoryTransaction] = []
        var token: Int64 = 0
        while true {
            let page = try reader.transactions(after: token, limit: 100)
            guard let last = page.last else { return result }
            result += page
            token = last.token
        }
    }

    /// All 1,731 update bitmaps of Photos 26.1 decode with the store's own model.
    @Test func photosUpdatesAllDecodeWithTheStoresModel() throws {
        let transactions = try Self.allTransactions(Fixtures.photos)
        #expect(transactions.count == 410)
        #expect(transactions.map(\.token) == Array(1...410))
        let changes = transactions.flatMap(\.changes)
        #expect(changes.count == 2_230)
        let updates = changes.filter { $0.type == .update }
        #expect(updates.count == 1_731)
        #expect(updates.filter { $0.properties == nil }.count == 0)
        #expect(changes.allSatisfy { $0.entity != nil })
    }

    @Test func photosKnownChanges() throws {
        let transactions = try Self.allTransactions(Fixtures.photos)
        let view = try #require(transactions.first { $0.token == 61 })
        #expect(view.author == "[0,1]")
        #expect(view.processName == "photolibraryd")
        #expect(view.bundleID == "com.apple.photolibraryd")
        #expect(view.contextName?.hasPrefix("low priority transient library") == true)
        let change = try #require(view.changes.first { $0.changeID == 472 })
        #expect(change.entity == "AdditionalAssetAttributes")
        #expect(change.objectPK == 4)
        #expect(change.properties == ["pendingViewCount", "viewCount"])
        // A moment whose assets changed updates its cached counts with them.
        let moments = transactions.flatMap(\.changes).filter { $0.entity == "Moment" && $0.type == .update }
        #expect(
            moments.contains {
                $0.properties == ["cachedCount", "cachedPhotosCount", "endDate", "modificationDate", "assets"]
            }
        )
        // An album reordered in its folder changes only the order column of parentFolder.
        let albums = transactions.flatMap(\.changes).filter { $0.entity == "Album" && $0.type == .update }
        #expect(albums.contains { $0.properties == ["parentFolder"] })
    }

    @Test func photosDeletesCarryNamedTombstones() throws {
        let transactions = try Self.allTransactions(Fixtures.photos)
        let deletes = transactions.flatMap(\.changes).filter { $0.type == .delete }
        #expect(deletes.count == 81)
        #expect(deletes.filter { !$0.tombstone.isEmpty }.count == 75)
        let person = try #require(deletes.first { $0.changeID == 380 })
        #expect(person.entity == "Person")
        #expect(person.objectPK == 11)
        #expect(
            person.tombstone == [
                "cloudDeleteState": .integer(0), "personUUID": .string("9BA44428-CB62-492E-9919-B03B91FFCA93"),
            ]
        )
        let raw = try RawSQLite.rows(Fixtures.photos, "SELECT ZTOMBSTONE0, ZTOMBSTONE1 FROM ACHANGE WHERE Z_PK = 380")[
            0
        ]
        #expect(raw == [.integer(0), .text("9BA44428-CB62-492E-9919-B03B91FFCA93")])
    }

    @Test func readingResumesAfterAToken() throws {
        let reader = try HistoryReader(store: LegacyStore(path: Fixtures.photos))
        #expect(try reader.transactions(after: 408).map(\.token) == [409, 410])
        #expect(try reader.transactions(after: 410).isEmpty)
        #expect(try reader.transaction(61)?.changes.contains { $0.changeID == 472 } == true)
    }

    @Test func sampleModel2SingleTransaction() throws {
        let transactions = try Self.allTransactions(Fixtures.sampleModel2V1)
        #expect(transactions.count == 1)
        #expect(transactions[0].changes.count == 5_468)
        #expect(transactions[0].changes.allSatisfy { $0.type == .insert && $0.columns == nil })
    }

    @Test func storesWithoutHistoryAreRefused() throws {
        #expect(throws: LegacyStoreError.self) { try HistoryReader(store: LegacyStore(path: Fixtures.moody)) }
    }
}

extension HistoryReaderTests {
    /// A value Core Data put in a tombstone column past the entity's preserved attributes (seen in real
    /// stores as a second copy of a uuid; none of the fixtures has one) is kept under its column's name.
    @Test func extraTombstoneColumnsAreKept() throws {
        let store = try LegacyStore(path: Fixtures.photos)
        let person = try #require(store.schema?.entities["Person"]?.number)
        let uuid = "9BA44428-CB62-492E-9919-B03B91FFCA93"
        let details = StoreChangeDecoder(store: store).decode(
            token: 1,
            entityNumber: person,
            type: .delete,
            columns: nil,
            tombstones: [.integer(0), .text(uuid), .null, .text(uuid)]
        )
        #expect(
            details.tombstone == [
                "cloudDeleteState": .integer(0), "personUUID": .string(uuid), "tombstone3": .string(uuid),
            ]
        )
    }
}
