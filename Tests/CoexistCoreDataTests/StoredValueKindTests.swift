import CoexistCoreData
import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import TestSupport
import Testing

/// A Core Data column holds what its affinity could not convert (a blob in a text column, text or a real in
/// an integer one): a string or integer attribute's column read as its own storage class, and refused,
/// naming the column, when it holds another.
/// Both ways a store reads rows: a fetch (values shared in blocks) and `objects(of:)` (each object's own).
@Suite struct StoredValueKindTests {
    /// A stored SQL literal in a `Book` column and what the attribute reads: its value, or a refusal.
    struct Case: Sendable, CustomTestStringConvertible {
        let column: String
        let literal: String
        let attribute: String
        let expected: AttributeValue?
        /// What the fetched object's `value(forKey:)` shows.
        var shown: String {
            switch expected {
            case .string(let text): text
            case .integer(let number): "\(number)"
            default: "nil"
            }
        }
        var testDescription: String { "\(column) = \(literal)" }
    }

    static let cases = [
        Case(column: "ZTITLE", literal: "'héllo'", attribute: "title", expected: .string("héllo")),
        Case(column: "ZTITLE", literal: "''", attribute: "title", expected: .string("")),
        Case(column: "ZTITLE", literal: "NULL", attribute: "title", expected: .null),
        Case(column: "ZTITLE", literal: "x'01'", attribute: "title", expected: nil),
        Case(column: "ZPAGESCOUNT", literal: "7", attribute: "pagesCount", expected: .integer(7)),
        Case(column: "ZPAGESCOUNT", literal: "NULL", attribute: "pagesCount", expected: .null),
        Case(column: "ZPAGESCOUNT", literal: "'seven'", attribute: "pagesCount", expected: nil),
        Case(column: "ZPAGESCOUNT", literal: "2.5", attribute: "pagesCount", expected: nil),
    ]

    @Test(arguments: cases) func columnsReadAsTheirStorageClass(_ stored: Case) throws {
        let directory = try TemporaryDirectory()
        let path = try directory.copy(Fixtures.sampleModel2V1)
        let pk = try #require(try RawSQLite.rows(path, "SELECT min(Z_PK) FROM ZBOOK")[0][0].integerValue)
        try RawSQLite.execute(path, "UPDATE ZBOOK SET \(stored.column) = \(stored.literal) WHERE Z_PK = \(pk)")

        let context = try ManagedObjectContext(storeAt: path, readOnly: true)
        let request = FetchRequest<ManagedObject>(entityName: "Book")
        let store = try LegacyStore(path: path)
        if let expected = stored.expected {
            let book = try #require(
                try context.fetch(request).first { $0.objectID.uriRepresentation().lastPathComponent == "p\(pk)" }
            )
            #expect(book.value(forKey: stored.attribute).map { "\($0)" } ?? "nil" == stored.shown)
            let object = try #require(try store.objects(of: "Book").first { $0.id.pk == pk })
            #expect(object.attributes[stored.attribute] == expected)
        } else {
            let fetched = #expect(throws: CoreDataError.self) { try context.fetch(request) }
            #expect("\(fetched.map { "\($0)" } ?? "")".contains(stored.column))
            let read = #expect(throws: LegacyStoreError.self) { try store.objects(of: "Book") }
            #expect("\(read.map { "\($0)" } ?? "")".contains(stored.column))
        }
    }
}
