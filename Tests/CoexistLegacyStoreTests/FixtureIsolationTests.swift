import Foundation
import TestSupport
import Testing

/// The shared fixtures are never opened in place (see `Fixtures`): a regression here once let one test's file
/// copy drop this process's SQLite locks, and a `coexistctl` process then truncated a mapped `-shm` (SIGBUS).
@Suite struct FixtureIsolationTests {
    @Test func storesAreReadFromAPrivateCopy() throws {
        #expect(Fixtures.root != Fixtures.shared)
        for store in Fixtures.allStores {
            #expect(store.hasPrefix(Fixtures.root + "/"))
            let shared = Fixtures.sharedPath(of: store)
            #expect(shared.hasPrefix(Fixtures.shared + "/"))
            #expect(FileManager.default.fileExists(atPath: shared))
            #expect(FileManager.default.isWritableFile(atPath: store))
        }
    }

    @Test func copiesForWritingComeFromTheSharedFolder() throws {
        let directory = try TemporaryDirectory()
        let copy = try directory.copy(Fixtures.photos)
        for suffix in ["", "-wal", "-shm"] {
            let original = try Data(contentsOf: URL(fileURLWithPath: Fixtures.sharedPath(of: Fixtures.photos) + suffix))
            #expect(try Data(contentsOf: URL(fileURLWithPath: copy + suffix)) == original)
        }
    }
}
