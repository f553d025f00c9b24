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
        let missing = directory.file("missing")
        #expect(throws: DatabaseFileHeader.Problem.self) { try DatabaseFileHeader.read(path: missing) }
    }
}
