import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import TestSupport
import Testing

/// Writing into copies of stores that real Core Data wrote.
@Suite struct FixtureWriteTests {
    let author = SaveMetadata(author: "coexist-tests", processName: "xctest")

    /// Derived-attribute triggers keep `Book.pagesCount` up to date through our writes.
    @Test func sampleModel2TriggersMaintainPagesCount() throws {
        let directory = try TemporaryDirectory()
        let store = try DemoStore.writableCopy(of: Fixtures.sampleModel2V1, in: directory)
        let novel = try #require(store.objects(of: "GraphicNovel").first)
        let before = novel.attributes["pagesCount"]
        var page = ObjectID(entity: "Page", pk: 0)
        let result = try store.save(author) { save in
            page = try save.insert(
                "Page",
                DemoStore.mandatoryValues(for: "Page", in: store).merging(["number": .integer(10_000)]) { $1 }
            )
            try save.setToOne(page, "book", novel.id)
        }
        #expect(result.token == 2)
        guard case .integer(let count)? = before else {
            Issue.record("pagesCount is not an integer: \(String(describing: before))")
            return
        }
        #expect(try store.object(novel.id)?.attributes["pagesCount"] == .integer(count + 1))
        #expect(
            try store.connection.scalar("SELECT Z1_BOOK FROM ZPAGE WHERE Z_PK = ?", [.integer(page.pk)]) == .integer(2)
        )
        try store.save(author) { save in try save.delete(page) }
        #expect(try store.object(novel.id)?.attributes["pagesCount"] == .integer(count))
        #expect(try store.connection.scalar("PRAGMA integrity_check") == .text("ok"))
    }

    /// Keys continue from Z_MAX, history numbering continues after the last transaction.
    @Test(arguments: [Fixtures.photos, Fixtures.sampleModel2V1]) func keysAndTokensContinue(fixture: String) throws {
        let directory = try TemporaryDirectory()
        let store = try DemoStore.writableCopy(of: fixture, in: directory)
        let maxima = Dictionary(uniqueKeysWithValues: store.primaryKeys.map { ($0.number, $0.max) })
        let lastToken = try store.connection.scalar("SELECT max(Z_PK) FROM ATRANSACTION").integerValue ?? 0
        let lastChange = try store.connection.scalar("SELECT max(Z_PK) FROM ACHANGE").integerValue ?? 0
        let model = try #require(store.model)
        let target = try #require(
            model.entities.first { entity in
                !entity.isAbstract && entity.superentity == nil && entity.uniquenessConstraints.isEmpty
            }
        )
        let rootNumber = try #require(store.schema?.entities[target.name]?.number)
        let result = try store.save(author) { save in
            try save.insert(target.name, DemoStore.mandatoryValues(for: target.name, in: store, seed: 1))
            try save.insert(target.name, DemoStore.mandatoryValues(for: target.name, in: store, seed: 2))
        }
        #expect(result.token == lastToken + 1)
        #expect(result.changes.map(\.objectPK) == [(maxima[rootNumber] ?? 0) + 1, (maxima[rootNumber] ?? 0) + 2])
        #expect(result.changes.map(\.changeID) == [lastChange + 1, lastChange + 2])
        let after = try PrimaryKeyTable.read(store.connection)
        for row in after { #expect(row.max >= maxima[row.number] ?? 0, "\(row.name)") }
        #expect(after.first { $0.number == rootNumber }?.max == (maxima[rootNumber] ?? 0) + 2)
        #expect(after.first { $0.number == 16002 }?.max == lastToken + 1)
        let reread = try HistoryReader(store: LegacyStore(path: store.path)).transactions(after: lastToken)
        #expect(reread.map(\.token) == [lastToken + 1])
        #expect(reread.first?.author == "coexist-tests")
    }

    /// Deleting a Photos person records its tombstone in the existing ZTOMBSTONE columns, readable as Core
    /// Data's own deletes are.
    @Test func photosDeleteTombstone() throws {
        let directory = try TemporaryDirectory()
        let store = try DemoStore.writableCopy(of: Fixtures.photos, in: directory)
        let person = try #require(store.objects(of: "Person").first)
        let result = try store.save(author) { save in try save.delete(person.id) }
        let delete = try #require(result.changes.first { $0.type == .delete && $0.entity == "Person" })
        #expect(delete.tombstone["personUUID"] == person.attributes["personUUID"])
        let token = try #require(result.token)
        let reader = try HistoryReader(store: LegacyStore(path: store.path))
        let fetched = try reader.transaction(token)
        let reread = try #require(fetched)
        #expect(reread.changes.first { $0.changeID == delete.changeID }?.tombstone == delete.tombstone)
        let updates = reread.changes.filter { $0.type == .update }
        #expect(updates.allSatisfy { $0.properties != nil && !($0.properties?.isEmpty ?? true) })
        #expect(try store.connection.scalar("PRAGMA integrity_check") == .text("ok"))
    }

    /// A store without history tables gets Core Data's, with Z_PRIMARYKEY rows, on its first save.
    @Test func historyTablesAreCreatedWhenAbsent() throws {
        let directory = try TemporaryDirectory()
        let store = try DemoStore.writableCopy(of: Fixtures.sampleModelV1, in: directory)
        #expect(!store.hasHistory)
        let result = try store.save(author) { save in
            try save.insert("Person", ["id": DemoStore.uuid(1), "updatedAt": .date(5), "firstName": .string("Zed")])
        }
        #expect(result.token == 1)
        #expect(store.hasHistory)
        let ours = try store.connection.rows(
            "SELECT name, sql FROM sqlite_master WHERE tbl_name LIKE 'A%' ORDER BY name"
        )
        let real = try RawSQLite.rows(
            Fixtures.sampleModel2V1,
            "SELECT name, sql FROM sqlite_master WHERE tbl_name LIKE 'A%' ORDER BY name"
        )
        // SampleModel preserves Person.id: one tombstone column more than SampleModel2's ACHANGE.
        #expect(ours.filter { $0[0] != .text("ACHANGE") } == real.filter { $0[0] != .text("ACHANGE") })
        #expect(ours.first { $0[0] == .text("ACHANGE") }?[1] == .text(HistoryDDL.changeTable(tombstones: 1)))
    }
}
