import CoexistSQLite
import Foundation
import TestSupport
import Testing

@Suite struct DatabaseFileHeaderTests {
    /// Every fixture passes; all are in WAL mode except SampleModel_V2, which Core Data left in rollback mode.
    @Test func realStoresPass() throws {
        for store in Fixtures.allStores {
            let header = try DatabaseFileHeader.read(path: store)
            #expect(header.pageSize == 4096)
            #expect(header.isWAL == (store != Fixtures.sampleModelV2), "\(store)")
        }
    }

    @Test func problemsAreNamed() throws {
        let directory = try TemporaryDirectory()
        let empty = try directory.write("empty", [])
        #expect(throws: DatabaseFileHeader.Problem.empty(path: empty)) { try DatabaseFileHeader.read(path: empty) }
        let text = try directory.write("text", Array("hello".utf8))
        #expect(throws: DatabaseFileHeader.Problem.notSQLite(path: text)) { try DatabaseFileHeader.read(path: text) }
        let original = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Fixtures.sampleModelV1)))
        let truncated = try directory.write("cut", Array(original.prefix(8192)))
        #expect(
            throws: DatabaseFileHeader.Problem.truncated(
                path: truncated,
                expectedBytes: original.count,
                actualBytes: 8192
            )
        ) {
            try DatabaseFileHeader.read(path: truncated)
        }
        // The same cut file in WAL mode with a frame for each missing page in its -wal: what a checkpoint
        // killed after writing page 1 leaves, not truncated; a WAL short of one page, or whose frames have
        // other salts (an older generation), does not count.
        #expect(original[18] == 2 && original[19] == 2, "the fixture is in WAL mode")
        func wal(pages: ClosedRange<Int>, salts: [UInt8]) -> [UInt8] {
            let be32 = { (value: Int) in (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }
            var bytes = [0x37, 0x7f, 0x06, 0x82] + be32(3_007_000) + be32(4096) + be32(0) + [1, 2, 3, 4, 5, 6, 7, 8]
            bytes += [UInt8](repeating: 0, count: 8)
            for page in pages {
                bytes += be32(page) + be32(0) + salts + [UInt8](repeating: 0, count: 8 + 4096)
            }
            return bytes
        }
        let pages = 3...(original.count / 4096)
        _ = try directory.write("cut-wal", wal(pages: 3...(pages.upperBound - 1), salts: [1, 2, 3, 4, 5, 6, 7, 8]))
        #expect(throws: DatabaseFileHeader.Problem.self) { try DatabaseFileHeader.read(path: truncated) }
        _ = try directory.write("cut-wal", wal(pages: pages, salts: [9, 9, 9, 9, 9, 9, 9, 9]))
        #expect(throws: DatabaseFileHeader.Problem.self) { try DatabaseFileHeader.read(path: truncated) }
        _ = try directory.write("cut-wal", wal(pages: pages, salts: [1, 2, 3, 4, 5, 6, 7, 8]))
        #expect(try DatabaseFileHeader.read(path: truncated).pageCount * 4096 == original.count)
        let missing = directory.file("missing")
        #expect(throws: DatabaseFileHeader.Problem.self) { try DatabaseFileHeader.read(path: missing) }
    }
}
