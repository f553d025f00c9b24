import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import CoexistStore
import Foundation
import TestSupport
import Testing

/// CoreDataPlus `SampleModel2`: `Book.pagesCount` is derived (`pages.@count`), kept by Core Data's
/// persistent triggers on the legacy side. After edits on either side and a bridge run, the new side holds
/// the same value and `verify` is equal.
@Suite struct DerivedAttributeTests {
    @Test func aDerivedCountIsTheSameOnBothSidesAfterEditsOnEach() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.copy(Fixtures.sampleModel2V1)
        let socket = directory.file("c.sock")
        func once() throws {
            let run = try ProductProcess.run("coexistd", ["--database", path, "--socket", socket, "--once"])
            #expect(run.status == 0, "\(run.stderr)")
        }
        func verify() throws -> ProductProcess.Result { try ProductProcess.run("coexistctl", ["verify", path]) }
        try once()
        #expect(try verify().status == 0)

        // The legacy app adds a page to book 1 and moves a page from book 2 to book 3.
        let legacy = try LegacyStore(path: path, options: OpenOptions())
        let pages = try legacy.connection.rows("SELECT Z_PK FROM ZPAGE WHERE ZBOOK = 2 LIMIT 1")
        let moved = try #require(pages.first?.first?.integerValue)
        try legacy.save(SaveMetadata(author: "old-app")) { save in
            var values = DemoStore.mandatoryValues(for: "Page", in: legacy)
            values["number"] = .integer(1_000)
            let page = try save.insert("Page", values)
            try save.setToOne(page, "book", ObjectID(entity: "Book", pk: 1))
            try save.setToOne(ObjectID(entity: "Page", pk: moved), "book", ObjectID(entity: "Book", pk: 3))
        }
        let counts = try legacy.connection.rows("SELECT ZPAGESCOUNT FROM ZBOOK WHERE Z_PK IN (1, 2, 3) ORDER BY Z_PK")
        #expect(counts.map { $0[0].integerValue } == [100, 98, 100], "Core Data's triggers counted")
        try once()
        let afterLegacy = try verify()
        #expect(afterLegacy.status == 0, "\(afterLegacy.stdout)")

        // The new app deletes a page of book 1.
        let model = try #require(legacy.model)
        let new = try NewStore(path: path, model: model)
        let firstBook = try #require(
            try new.connection.rows("SELECT id FROM book ORDER BY id LIMIT 1").first?.first?.textValue
        )
        let page = try #require(
            try new.connection.rows("SELECT id FROM page WHERE book_id = ? LIMIT 1", [.text(firstBook)]).first?
                .first?.textValue
        )
        try new.save(SaveMetadata(author: "new-app")) { save in
            try save.delete(ObjectRef(entity: "Page", id: page))
        }
        try once()
        let afterNew = try verify()
        #expect(afterNew.status == 0, "\(afterNew.stdout)")
    }
}
