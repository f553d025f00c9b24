import CoexistModel
import TestSupport
import Testing

@Suite struct BinaryPropertyListTests {
    @Test func encodeDecodeRoundTrip() throws {
        let value = PropertyListValue.dictionary([
            "string": .string("SQLite"),
            "unicode": .string("héllo ✓"),
            "long": .string(String(repeating: "x", count: 300)),
            "ints": .array([
                .integer(0), .integer(255), .integer(256), .integer(70_000), .integer(1 << 40), .integer(-1),
            ]),
            "real": .real(3.25),
            "bool": .boolean(true),
            "data": .data([UInt8](repeating: 9, count: 40)),
            "nested": .dictionary(["a": .array([])]),
            "uid": .uid(7),
        ])
        #expect(try BinaryPropertyList.decode(BinaryPropertyList.encode(value)) == value)
    }

    @Test func malformedInputIsRejectedNotTrusted() throws {
        let good = BinaryPropertyList.encode(.array([.string("a"), .string("b")]))
        #expect(throws: BinaryPropertyList.Failure.self) { try BinaryPropertyList.decode(Array(good.dropLast(3))) }
        #expect(throws: BinaryPropertyList.Failure.self) { try BinaryPropertyList.decode(Array("bplist00".utf8)) }
        var cyclic = good
        // Point the array's first element reference at the array itself (object 0).
        cyclic[9] = 0
        #expect(throws: BinaryPropertyList.Failure.self) { try BinaryPropertyList.decode(cyclic) }
        for cut in stride(from: 0, to: good.count, by: 1) {
            var damaged = good
            damaged[cut] ^= 0xFF
            _ = try? BinaryPropertyList.decode(damaged)  // must not crash
        }
    }

    @Test func versionInfoHashesMatchTheStore() throws {
        let info = try VersionInfo.read(path: Fixtures.sampleModelVersionInfo)
        let hashes = try #require(info.hashes["SampleModel"])
        #expect(hashes.keys.sorted() == ["Car", "ExpensiveSportCar", "Person", "SportCar"])
        #expect(hashes.values.allSatisfy { $0.count == 32 })
        let plist = try #require(
            RawSQLite.rows(Fixtures.sampleModelV1, "SELECT Z_PLIST FROM Z_METADATA")[0][0].blobValue
        )
        let stored = try #require(BinaryPropertyList.decode(plist).dictionary?["NSStoreModelVersionHashes"]?.dictionary)
        #expect(stored.mapValues(\.data) == hashes.mapValues { $0 })
    }
}

@Suite struct HostileBinaryPropertyListTests {
    /// A trailer: 6 unused bytes, offset size, reference size, object count, top object, offset-table offset.
    static func trailer(offsetSize: UInt8, referenceSize: UInt8, objects: UInt64, table: UInt64) -> [UInt8] {
        func be(_ value: UInt64) -> [UInt8] {
            (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
        }
        return [0, 0, 0, 0, 0, 0, offsetSize, referenceSize] + be(objects) + be(0) + be(table)
    }

    @Test func hugeReferencesAndUIDsAreErrorsNotTraps() {
        let array =
            Array("bplist00".utf8) + [0xA1] + [UInt8](repeating: 0xFF, count: 8) + [8]
            + Self.trailer(offsetSize: 1, referenceSize: 8, objects: 1, table: 17)
        #expect(throws: BinaryPropertyList.Failure.self) { try BinaryPropertyList.decode(array) }
        let uid =
            Array("bplist00".utf8) + [0x87] + [UInt8](repeating: 0xFF, count: 8) + [8]
            + Self.trailer(offsetSize: 1, referenceSize: 8, objects: 1, table: 17)
        #expect(throws: BinaryPropertyList.Failure.self) { try BinaryPropertyList.decode(uid) }
    }

    /// One 1 MB data object referenced 60,000 times decodes once, not 60,000 times.
    @Test func sharedReferencesAreDecodedOnce() throws {
        let count = 60_000
        var body = Array("bplist00".utf8)
        let arrayOffset = body.count
        body += [0xAF, 0x11, UInt8(count >> 8), UInt8(count & 0xFF)]
        for _ in 0..<count { body += [0x00, 0x01] }  // every element is object 1
        let dataOffset = body.count
        let size = 1 << 20
        body += [
            0x4F, 0x12, UInt8(size >> 24), UInt8((size >> 16) & 0xFF), UInt8((size >> 8) & 0xFF), UInt8(size & 0xFF),
        ]
        body += [UInt8](repeating: 7, count: size)
        let table = body.count
        body += [
            UInt8(arrayOffset >> 24), UInt8((arrayOffset >> 16) & 0xFF), UInt8((arrayOffset >> 8) & 0xFF),
            UInt8(arrayOffset & 0xFF),
        ]
        body += [
            UInt8(dataOffset >> 24), UInt8((dataOffset >> 16) & 0xFF), UInt8((dataOffset >> 8) & 0xFF),
            UInt8(dataOffset & 0xFF),
        ]
        body += Self.trailer(offsetSize: 4, referenceSize: 2, objects: 2, table: UInt64(table))
        let decoded = try BinaryPropertyList.decode(body)
        #expect(decoded.array?.count == count)
        #expect(decoded.array?.last?.data?.count == size)
    }
}
