import Foundation
import TestSupport
import Testing

/// One coexistd per database file: a second one (or a `--once` run) exits 75 naming the first one's pid,
/// before binding anything, and the first keeps serving.
@Suite struct OneDaemonPerFileTests {
    @Test func aSecondDaemonOnTheSameFileExits75() throws {
        let fixture = try EventFixture()
        let path = fixture.shared.legacy.path
        let first = fixture.daemon.process.processIdentifier
        let other = fixture.directory.file("other.sock")
        let second = try ProductProcess.run("coexistd", ["--database", path, "--socket", other])
        #expect(second.status == 75, "\(second.stderr)")
        #expect(second.stderr.contains("another coexistd (pid \(first)) serves \(path)"), "\(second.stderr)")
        #expect(!FileManager.default.fileExists(atPath: other), "the second daemon bound nothing")
        let once = try ProductProcess.run("coexistd", ["--database", path, "--socket", other, "--once"])
        #expect(once.status == 75, "\(once.stderr)")
        // Checking the configuration takes no lock: it writes nothing and serves nothing.
        let check = try ProductProcess.run("coexistd", ["--database", path, "--socket", other, "--check-config"])
        #expect(check.status == 0, "\(check.stderr)")

        _ = try fixture.legacyInsert("still served")
        let status = try fixture.client().request(#"{"op":"status"}"#)
        #expect(status["type"] as? String == "status")
        #expect(fixture.daemon.stop() == 0)
        let after = try ProductProcess.run("coexistd", ["--database", path, "--socket", other, "--once"])
        #expect(after.status == 0, "once the first has gone, the file is free: \(after.stderr)")
    }

    /// `coexistctl status --database FILE` finds the daemon serving FILE from the file alone, and says
    /// clearly when none does (69), writing nothing.
    @Test func statusFindsTheDaemonFromTheDatabase() throws {
        let fixture = try EventFixture()
        let path = fixture.shared.legacy.path
        let pid = fixture.daemon.process.processIdentifier
        let found = try ProductProcess.run("coexistctl", ["status", "--database", path, "--json"])
        #expect(found.status == 0, "\(found.stderr)")
        #expect(found.stdout.contains(#""type":"status""#), "\(found.stdout)")
        let both = try ProductProcess.run("coexistctl", ["status", "--database", path, "--socket", "x.sock"])
        #expect(both.status == 64, "\(both.stderr)")
        #expect(fixture.daemon.stop() == 0)

        // Every file's bytes but the -shm's, SQLite's shared-memory index that every reader of a WAL
        // database marks its reads in (its presence is compared all the same).
        let files = { () throws -> [String: Data] in
            var contents: [String: Data] = [:]
            for name in try FileManager.default.contentsOfDirectory(atPath: fixture.directory.path) {
                contents[name] =
                    name.hasSuffix("-shm") ? Data() : FileManager.default.contents(atPath: fixture.directory.file(name))
            }
            return contents
        }
        let before = try files()
        let gone = try ProductProcess.run("coexistctl", ["status", "--database", path])
        #expect(gone.status == 69, "\(gone.stderr)")
        #expect(
            gone.stderr.contains("\(path): no coexistd serves this file now (the last one was pid \(pid)"),
            "\(gone.stderr)"
        )
        #expect(try files() == before, "status wrote nothing")
        let never = try ProductProcess.run(
            "coexistctl",
            ["status", "--database", try fixture.directory.copy(Fixtures.sampleModelV1)]
        )
        #expect(never.status == 69, "\(never.stderr)")
        #expect(never.stderr.contains("no coexistd has served this file"), "\(never.stderr)")
    }
}
