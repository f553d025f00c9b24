import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import CoexistStore
import TestSupport
import Testing

/// A reproducible generator (SplitMix64), so a failure can be replayed from its seed.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Legacy → new → legacy is byte-identical for every attribute type (property test).
@Suite struct ValueRoundTripTests {
    static let count = 10_000

    static func legacyValues(_ type: AttributeType, _ random: inout SplitMix) -> [SQLiteValue] {
        var values: [SQLiteValue] = [.null]
        switch type {
        case .integer16: values += [.integer(Int64(Int16.min)), .integer(Int64(Int16.max)), .integer(0), .integer(-1)]
        case .integer32: values += [.integer(Int64(Int32.min)), .integer(Int64(Int32.max))]
        case .integer64: values += [.integer(.min), .integer(.max)]
        case .double, .decimal, .date:
            values += [
                .real(.infinity), .real(-.infinity), .real(.nan), .real(-0.0), .real(.leastNonzeroMagnitude),
                .real(.greatestFiniteMagnitude),
            ]
            values += [.real(-978_307_200.5), .real(4_102_444_800.123456), .real(1e15 + 0.5), .integer(737_057_646)]
        case .string, .uri:
            values += [.text(""), .text("é"), .text("e\u{301}"), .text("日本語 ✓ \u{1F600}"), .text("nul\u{0}byte")]
        case .binary, .transformable:
            values += [.blob([]), .blob([UInt8](repeating: 0xAB, count: 1 << 20)), .blob([0x02, 0x41])]
        default: break
        }
        while values.count < count {
            switch type {
            case .integer16: values.append(.integer(Int64(Int16.random(in: .min ... .max, using: &random))))
            case .integer32: values.append(.integer(Int64(Int32.random(in: .min ... .max, using: &random))))
            case .integer64: values.append(.integer(Int64(bitPattern: random.next())))
            case .boolean: values.append(.integer(Int64.random(in: 0...1, using: &random)))
            case .double: values.append(.real(Double(bitPattern: random.next())))
            case .float: values.append(.real(Double(Float(bitPattern: UInt32(truncatingIfNeeded: random.next())))))
            case .decimal, .date:
                switch random.next() % 4 {
                case 0:
                    values.append(.integer(Int64.random(in: -1_000_000_000_000...1_000_000_000_000, using: &random)))
                case 1: values.append(.real(Double.random(in: -1e11...1e11, using: &random)))
                case 2: values.append(.real(Double(bitPattern: random.next())))
                default: values.append(.real(Double.random(in: -1...1, using: &random)))
                }
            case .string, .uri:
                let length = Int.random(in: 0...40, using: &random)
                let scalars = (0..<length).compactMap { _ -> Unicode.Scalar? in
                    let pick = random.next() % 10
                    let value =
                        pick < 6
                        ? UInt32.random(in: 0x20...0x7E, using: &random)
                        : UInt32.random(in: 0xA0...0x2FFFF, using: &random)
                    return Unicode.Scalar(value)
                }
                var text = ""
                text.unicodeScalars.append(contentsOf: scalars)
                values.append(.text(text))
            case .uuid: values.append(.blob((0..<16).map { _ in UInt8.random(in: 0...255, using: &random) }))
            case .binary, .transformable:
                let length = Int.random(in: 0...64, using: &random)
                values.append(.blob((0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }))
            default: values.append(.null)
            }
        }
        return values
    }

    static let types: [AttributeType] = [
        .integer16, .integer32, .integer64, .boolean, .double, .float, .decimal, .date, .string, .uri, .uuid, .binary,
        .transformable,
    ]

    @Test(arguments: types) func legacyToNewToLegacyIsByteIdentical(type: AttributeType) throws {
        let seed = UInt64(type.code) &* 7_919
        var random = SplitMix(state: seed)
        let attribute = Attribute(name: "value", type: type, isOptional: true)
        let directory = try TemporaryDirectory()
        let connection = try Connection(
            path: directory.file("values.sqlite"),
            options: OpenOptions(access: .readWriteCreate)
        )
        try connection.execute("CREATE TABLE legacy (Z_PK INTEGER PRIMARY KEY, ZVALUE \(type.legacyColumnType))")
        let encoding = ValueEncoding(type)
        try connection.execute("CREATE TABLE new (n INTEGER PRIMARY KEY, value \(encoding.sqlType)) STRICT")
        try connection.execute("CREATE TABLE back (Z_PK INTEGER PRIMARY KEY, ZVALUE \(type.legacyColumnType))")
        let values = Self.legacyValues(type, &random)
        try connection.write {
            for (index, value) in values.enumerated() {
                try connection.run("INSERT INTO legacy VALUES (?, ?)", [.integer(Int64(index)), value])
            }
        }
        // Legacy stored → value → new stored.
        let stored = try connection.rows("SELECT Z_PK, ZVALUE FROM legacy ORDER BY Z_PK")
        try connection.write {
            for row in stored {
                let value = try AttributeCodec.decode(row[1], as: attribute)
                try connection.run(
                    "INSERT INTO new VALUES (?, ?)",
                    [row[0], try NewValueCodec.encode(value, as: attribute)]
                )
            }
        }
        // New stored → value → legacy stored.
        let mirrored = try connection.rows("SELECT n, value FROM new ORDER BY n")
        try connection.write {
            for row in mirrored {
                let value = try NewValueCodec.decode(row[1], as: attribute)
                try connection.run(
                    "INSERT INTO back VALUES (?, ?)",
                    [row[0], try AttributeCodec.encode(value, as: attribute)]
                )
            }
        }
        let original = try connection.rows("SELECT Z_PK, typeof(ZVALUE), quote(ZVALUE) FROM legacy ORDER BY Z_PK")
        let final = try connection.rows("SELECT Z_PK, typeof(ZVALUE), quote(ZVALUE) FROM back ORDER BY Z_PK")
        #expect(original.count == Self.count)
        let mismatches = zip(original, final).filter { $0 != $1 }
        #expect(mismatches.isEmpty, "seed \(seed): \(mismatches.prefix(3))")
        // And the exact bytes of every value, beyond quote()'s text form.
        let left = try connection.rows("SELECT ZVALUE FROM legacy ORDER BY Z_PK")
        let right = try connection.rows("SELECT ZVALUE FROM back ORDER BY Z_PK")
        #expect(left.elementsEqual(right) { lhs, rhs in Self.sameBits(lhs[0], rhs[0]) })
    }

    static func sameBits(_ lhs: SQLiteValue, _ rhs: SQLiteValue) -> Bool {
        if case .real(let a) = lhs, case .real(let b) = rhs { return a.bitPattern == b.bitPattern }
        return lhs == rhs
    }

    @Test func valuesTheOtherSideCannotHoldAreRefusedNamingTheAttribute() {
        let small = Attribute(name: "priority", type: .integer16)
        let error = #expect(throws: NewValueCodec.Failure.self) {
            try NewValueCodec.encode(.integer(70_000), as: small)
        }
        #expect(error?.reason.contains("priority") == true)
        #expect(throws: AttributeCodec.Failure.self) { try AttributeCodec.encode(.integer(70_000), as: small) }
        #expect(throws: NewValueCodec.Failure.self) {
            try NewValueCodec.decode(.integer(2), as: Attribute(name: "flag", type: .boolean))
        }
        #expect(throws: AttributeCodec.Failure.self) {
            try AttributeCodec.decode(.blob([1, 2]), as: Attribute(name: "id", type: .uuid))
        }
    }
}
