import CoexistModel
import CoexistSQLite
import TestSupport
import Testing

@testable import CoexistStore

/// A new-side row decoder reads a string or integer attribute's column as text or integer without making an
/// SQLite value first: for every attribute type and every storage class a column can hold, what it gives (a
/// value, or the refusal naming the attribute) is what decoding the column's value gives.
@Suite struct NewValueCodecTests {
    static let types: [AttributeType] = [
        .integer16, .integer32, .integer64, .boolean, .double, .float, .decimal, .date, .string, .uri, .uuid, .binary,
        .transformable,
    ]

    /// A value of each storage class, and the edges a typed read could get wrong (an empty text, a text that
    /// reads as a number, an integer past 32 bits, an empty blob).
    static let stored: [SQLiteValue] = [
        .null, .integer(0), .integer(1), .integer(70_000), .integer(.min), .real(1.5), .real(-0.0), .text(""),
        .text("7"), .text("é ✓"), .text("0F0E0D0C-0B0A-0908-0706-050403020100"), .blob([]), .blob([0x02, 0x41]),
    ]

    @Test(arguments: types) func typedReadsGiveWhatTheValueGives(type: AttributeType) throws {
        let directory = try TemporaryDirectory()
        let connection = try Connection(
            path: directory.file("typed.sqlite"),
            options: OpenOptions(access: .readWriteCreate)
        )
        // No declared type: each value keeps its storage class.
        try connection.execute("CREATE TABLE t (n INTEGER PRIMARY KEY, value)")
        try connection.write {
            for (index, value) in Self.stored.enumerated() {
                try connection.run("INSERT INTO t VALUES (?, ?)", [.integer(Int64(index)), value])
            }
        }
        var compared = 0
        try connection.forEachRow("SELECT n, value FROM t ORDER BY n") { row in
            let typed = Self.outcome {
                try NewValueCodec.decode(row, at: 1, type: type, name: "value", external: type == .binary)
            }
            let plain = Self.outcome {
                try NewValueCodec.decode(row[1], type: type, name: "value", external: type == .binary)
            }
            #expect(typed == plain, "\(type) from \(row[1])")
            compared += 1
        }
        #expect(compared == Self.stored.count)
    }

    /// A decoded value or the refusal's text, comparable.
    static func outcome(_ body: () throws -> AttributeValue) -> String {
        do {
            return "value \(try body())"
        } catch {
            return "refused \(error)"
        }
    }
}
