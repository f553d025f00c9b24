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
