import Foundation
import TestSupport
import Testing

/// The README's tour runs as written: its commands, in order, in bash with the built products on the
/// `PATH`, against a fresh folder in place of `/tmp/coexist-tour`; every one exits 0.
@Suite struct ReadmeTourTests {
    @Test func theTourRunsAsWritten() throws {
        let readme = try String(contentsOfFile: Fixtures.repository + "/README.md", encoding: .utf8)
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let start = try #require(lines.firstIndex(of: "<!-- tour -->"), "the README has a tour")
        let end = try #require(lines.firstIndex(of: "<!-- /tour -->"), "the tour ends")
        let commands = lines[(start + 1)..<end].filter { !$0.hasPrefix("```") && !$0.isEmpty }
        #expect(commands.count >= 15, "\(commands)")
        let directory = try TemporaryDirectory()
        let folder = directory.file("tour")
        // Whatever fails, a daemon the tour started in the background is stopped (its pipes would keep this
        // test waiting), and the whole tour is bounded.
        let script =
            "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n"
            + commands.map { $0.replacingOccurrences(of: "/tmp/coexist-tour", with: folder) }.joined(separator: "\n")
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = ProductProcess.productsDirectory + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        environment["COEXISTD_CONFIG"] = ""
        for name in ["INVOCATION_ID", "JOURNAL_STREAM", "SYSTEMD_EXEC_PID"] { environment[name] = nil }
        // -x: the failing command is the last one traced on stderr.
        let result = try ProductProcess.run(
            path: "/usr/bin/timeout",
            // SIGKILL: this process may run with SIGTERM blocked (a signalfd test), and bash would inherit it.
            ["-s", "KILL", "300", "/bin/bash", "-euxo", "pipefail", "-c", script],
            directory: directory.path,
            environment: environment
        )
        #expect(result.status == 0, "\(result.stderr.suffix(3_000))")
        #expect(result.stdout.contains("equal: "), "verify ran: \(result.stdout.suffix(2_000))")
        #expect(FileManager.default.fileExists(atPath: folder + "/history.ndjson"))
    }
}
