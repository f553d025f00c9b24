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
}
