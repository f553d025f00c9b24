import CoexistModel
import CoexistSQLite
import TestSupport
import Testing

@testable import CoexistBridge

/// The set-based copy converts most values in SQL, and sends the rest through the codecs: for every attribute
/// type and every kind of stored value (in range or not, of the right storage class or not), the SQL gives
/// exactly what the codecs give, and refuses exactly what they refuse.
@Suite struct MirrorConversionTests {
    static let stored: [String] = [
        "NULL", "0", "1", "2", "-1", "32767", "32768", "-32768", "-32769", "2147483647", "2147483648",
        "-2147483648", "-2147483649", "9223372036854775807", "-9223372036854775808", "1.5", "2.0", "-0.0",
        "'text'", "''", "'12'", "x'000102030405060708090a0b0c0d0e0f'", "x'00010203'", "x'02616263'", "x''",
    ]

    @Test(arguments: AttributeType.allCases) func sqlConvertsExactlyAsTheCodecs(_ type: AttributeType) throws {
        let directory = try TemporaryDirectory()
        let connection = try Connection(
            path: directory.file("c.sqlite"),
            options: OpenOptions(access: .readWriteCreate)
        )
        let conversions = MirrorConversions()
        try conversions.register(on: connection)
        try connection.execute("CREATE TABLE s (v)")
        for value in Self.stored { try connection.execute("INSERT INTO s (v) VALUES (\(value))") }
        for external in [false, true] {
            let attribute = Attribute(name: "a", type: type, allowsExternalBinaryDataStorage: external)
            let fast = conversions.expression("E", attribute, "s.v")
            let slow = "coexist_mirror_value(\(conversions.slot("E", attribute)), s.v)"
            for (index, value) in Self.stored.enumerated() {
                let viaSQL = try Self.convert(connection, conversions, fast, row: index + 1)
                let viaCodecs = try Self.convert(connection, conversions, slow, row: index + 1)
                #expect(viaSQL == viaCodecs, "\(type) (external \(external)) of \(value)")
            }
        }
    }

    /// The converted value with its storage class, or the refusal.
    static func convert(
        _ connection: Connection,
        _ conversions: MirrorConversions,
        _ sql: String,
        row: Int
    ) throws
        -> String
    {
        let rows = try connection.rows("SELECT \(sql), typeof(\(sql)) FROM s WHERE rowid = ?", [.integer(Int64(row))])
        do {
            try conversions.check()
        } catch {
            return "refused"
        }
        return "\(rows.first?.first ?? .null) \(rows.first?.last ?? .null)"
    }
}
