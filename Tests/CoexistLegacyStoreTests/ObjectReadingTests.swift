import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import Foundation
import TestSupport
import Testing

@Suite struct ObjectReadingTests {
    /// Every row of every root table of every fixture decodes, and the counts match the raw tables.
    @Test(arguments: Fixtures.allStores) func everyRowReads(store: String) throws {
        let opened = try LegacyStore(path: store)
        let model = try #require(opened.model)
        var read = 0
        for root in model.entities where root.superentity == nil {
            let objects = try opened.objects(of: root.name)
            let table = try #require(opened.schema?.entities[root.name]?.table)
            let raw = try RawSQLite.rows(store, "SELECT count(*) FROM \(SQLIdentifier.quoted(table))")[0][0]
            #expect(Int64(objects.count) == raw.integerValue, "\(root.name)")
            read += objects.count
        }
        #expect(read > 0)
    }

    @Test func decodedValuesEqualRawValuesAfterConversion() throws {
        let store = try LegacyStore(path: Fixtures.sampleModel2V1)
        let raw = try RawSQLite.rows(
            Fixtures.sampleModel2V1,
            "SELECT Z_PK, ZPUBLISHEDAT, hex(ZUNIQUEID), ZPRICE, ZTITLE FROM ZBOOK ORDER BY Z_PK"
        )
        let books = try store.objects(of: "Book")
        #expect(books.count == raw.count)
        for (book, row) in zip(books, raw) {
            #expect(book.id.pk == row[0].integerValue)
            #expect(book.attributes["publishedAt"] == row[1].numericValue.map { .date($0) } ?? .null)
            let hex = row[2].textValue?.lowercased() ?? ""
            #expect(book.attributes["uniqueID"]?.uuidString?.replacingOccurrences(of: "-", with: "") == hex)
            let price: AttributeValue =
                switch row[3] {
                case .integer(let number): .decimal(String(number))
                case .real(let number): .decimal(String(number))
                default: .null
                }
            #expect(book.attributes["price"] == price)
            #expect(book.attributes["title"] == row[4].textValue.map { .string($0) } ?? .null)
        }
        let novel = try #require(books.first { $0.id.entity == "GraphicNovel" })
        #expect(novel.attributes["isBlackAndWhite"] != nil)
    }

    @Test func photosDatesAcceptIntegerAndRealStorage() throws {
        let store = try LegacyStore(path: Fixtures.photos)
        let raw = try RawSQLite.rows(
            Fixtures.photos,
            "SELECT Z_PK, ZDATECREATED, typeof(ZDATECREATED), ZUUID FROM ZASSET ORDER BY Z_PK"
        )
        let assets = try store.objects(of: "Asset")
        #expect(assets.count == raw.count)
        for (asset, row) in zip(assets, raw) {
            #expect(asset.attributes["dateCreated"] == row[1].numericValue.map { .date($0) } ?? .null)
            #expect(asset.attributes["uuid"] == row[3].textValue.map { .string($0) } ?? .null)
        }
        let kinds = Set(raw.compactMap { $0[2].textValue })
        #expect(kinds.contains("real") || kinds.contains("integer"))
    }

    @Test func relationshipsReadFromBothSides() throws {
        let store = try LegacyStore(path: Fixtures.sampleModel2V1)
        let page = try #require(try store.objects(of: "Page").first { $0.toOne["book"] != nil })
        let book = try #require(page.toOne["book"])
        #expect(try store.related(book, "pages").contains(page.id))
        #expect(try store.related(page.id, "book") == [book])
        let author = try #require(store.objects(of: "Author").first)
        let books = try store.related(author.id, "books")
        #expect(!books.isEmpty)
        for id in books { #expect(try store.object(id)?.toOne["author"] == author.id) }
    }

    @Test func orderedManyToManyFollowsZFOK() throws {
        let store = try LegacyStore(path: Fixtures.photos)
        let raw = try RawSQLite.rows(
            Fixtures.photos,
            "SELECT Z_33ALBUMS, Z_3ASSETS FROM Z_33ASSETS ORDER BY Z_33ALBUMS, Z_FOK_3ASSETS"
        )
        let albumKey = try #require(raw.first?[0].integerValue)
        let album = try #require(try store.objects(of: "GenericAlbum").first { $0.id.pk == albumKey })
        let expected = raw.filter { $0[0].integerValue == albumKey }.compactMap { $0[1].integerValue }
        #expect(try store.related(album.id, "assets").map(\.pk) == expected)
        let asset = try #require(expected.first)
        #expect(try store.related(ObjectID(entity: "Asset", pk: asset), "albums").contains(album.id))
    }

    @Test func codecRoundTripsEveryFixtureValue() throws {
        for path in Fixtures.allStores {
            let store = try LegacyStore(path: path)
            let model = try #require(store.model)
            let schema = try #require(store.schema)
            for root in model.entities where root.superentity == nil {
                guard let table = schema.entities[root.name]?.table else { continue }
                for entity in model.hierarchy(from: root) {
                    for attribute in model.allAttributes(of: entity) where !attribute.isTransient {
                        guard case .attribute(let column) = schema.entities[entity.name]?.properties[attribute.name]
                        else {
                            continue
                        }
                        let sql =
                            "SELECT \(SQLIdentifier.quoted(column)) FROM \(SQLIdentifier.quoted(table)) WHERE Z_ENT = \(schema.entities[entity.name]?.number ?? 0) LIMIT 50"
                        for row in try RawSQLite.rows(path, sql) {
                            let decoded = try AttributeCodec.decode(row[0], as: attribute)
                            #expect(
                                try AttributeCodec.encode(decoded, as: attribute) == row[0],
                                "\(entity.name).\(attribute.name)"
                            )
                        }
                    }
                }
            }
        }
    }

    @Test func mistypedValuesAreNamed() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.copy(Fixtures.sampleModelV1)
        let connection = try Connection(path: path)
        try connection.run("UPDATE ZPERSON SET ZUPDATEDAT = 'yesterday' WHERE Z_PK = (SELECT min(Z_PK) FROM ZPERSON)")
        let store = try LegacyStore(path: path)
        let error = #expect(throws: LegacyStoreError.self) { try store.objects(of: "Person") }
        #expect(error?.description.contains("ZPERSON row Z_PK=") == true)
        #expect(error?.description.contains("column ZUPDATEDAT (Person.updatedAt)") == true)
    }
}
