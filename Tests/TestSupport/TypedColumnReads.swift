public import CoexistModel
public import CoexistSQLite
import Testing

/// A check shared by the two stores' value codecs: reading a column's text, integer or real as such (a
/// codec's typed read) must give what decoding the column's value gives, for every attribute type and
/// every storage class a column can hold: the same value, or the same refusal.
public enum TypedColumnReads {
    /// Every attribute type.
    public static let types: [AttributeType] = [
        .integer16, .integer32, .integer64, .boolean, .double, .float, .decimal, .date, .string, .uri, .uuid, .binary,
        .transformable,
    ]

    /// A value of each storage class, and the edges a typed read could get wrong (an empty text, a text that
    /// reads as a number, an integer past 32 bits, an integer that is no boolean, a negative zero, an empty
    /// blob).
    public static let stored: [SQLiteValue] = [
        .null, .integer(0), .integer(1), .integer(2), .integer(70_000), .integer(.min), .real(1.5), .real(-0.0),
        .real(1), .text(""), .text("7"), .text("é ✓"), .text("0F0E0D0C-0B0A-0908-0706-050403020100"), .blob([]),
        .blob([0x02, 0x41]),
    ]

    /// Stores ``stored`` in a temporary database's untyped column, then calls `typed` and `plain` on each row
    /// (the column is at position 1) and expects the same outcome from both.
    public static func check(
        _ type: AttributeType,
        typed: (Row) throws -> AttributeValue,
        plain: (SQLiteValue) throws -> AttributeValue
    ) throws {
        let directory = try TemporaryDirectory()
        let connection = try Connection(
            path: directory.file("typed.sqlite"),
            options: OpenOptions(access: .readWriteCreate)
        )
        // No declared type: each value keeps its storage class.
        try connection.execute("CREATE TABLE t (n INTEGER PRIMARY KEY, value)")
        try connection.write {
            for (index, value) in stored.enumerated() {
                try connection.run("INSERT INTO t VALUES (?, ?)", [.integer(Int64(index)), value])
            }
        }
        var compared = 0
        try connection.forEachRow("SELECT n, value FROM t ORDER BY n") { row in
            #expect(outcome { try typed(row) } == outcome { try plain(row[1]) }, "\(type) from \(row[1])")
            compared += 1
        }
        #expect(compared == stored.count)
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
