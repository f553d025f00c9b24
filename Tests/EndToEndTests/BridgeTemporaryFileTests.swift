import CoexistHistory
import CoexistLegacyStore
import Foundation
import TestSupport
import Testing

/// A bridge pass keeps its statement journal in memory: mirroring one-row commits creates no file in SQLite's
/// temporary folder (SQLite's 64 KiB default made each pass create, write and delete one).
@Suite struct BridgeTemporaryFileTests {
    /// The folder's last change (a file created or deleted in it), to the nanosecond.
    private static func changed(_ path: String) throws -> timespec {
        var info = stat()
        #expect(stat(path, &info) == 0)
        return info.st_mtim
    }

    @Test func mirroringSmallCommitsCreatesNoTemporaryFile() throws {
        let folder = try TemporaryDirectory()
        let temporaries = folder.path
        let fixture = try EventFixture(environment: ["SQLITE_TMPDIR": temporaries])
        try fixture.waitUntilCaughtUp()
        let before = try Self.changed(temporaries)
        for index in 0..<20 {
            _ = try fixture.shared.legacy.save(SaveMetadata(author: "old-app")) { save in
                try save.insert(
                    "Task",
                    [
                        "id": .uuid((0..<16).map { _ in UInt8.random(in: 0...255) }),
                        "title": .string("task \(index)"), "createdAt": .date(0),
                    ]
                )
            }
            try fixture.waitUntilCaughtUp()
        }
        let mirrored = try fixture.shared.new.refs(of: "Task")
        #expect(mirrored.count == 20)
        let after = try Self.changed(temporaries)
        #expect(
            after.tv_sec == before.tv_sec && after.tv_nsec == before.tv_nsec,
            "a file was created in SQLite's temporary folder while 20 commits were mirrored"
        )
    }
}
