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

    /// The README's benchmark commands (measurements of minutes, run at a small scale by BenchSmokeTests)
    /// name scenarios and options coexist-bench has: each `coexist-bench SCENARIO --option …` it shows is
    /// checked against the tool's own usage, so a renamed scenario or option fails here.
    @Test func everyBenchmarkCommandNamesWhatTheToolHas() throws {
        let readme = try String(contentsOfFile: Fixtures.repository + "/README.md", encoding: .utf8)
        let help = try ProductProcess.run("coexist-bench", ["--help"])
        #expect(help.status == 0, "\(help.stderr)")
        let scenarios = Set(help.stdout.matches(of: #/\n  ([a-z][a-z-]*)  /#).map { String($0.1) })
        #expect(scenarios.isSuperset(of: ["latency", "publish", "crash", "soak", "all"]), "\(scenarios)")
        let commands = readme.matches(of: /coexist-bench ([a-z][a-z-]*)([^`|\n]*)/)
        #expect(commands.count >= 15, "\(commands.count) benchmark commands found")
        for command in commands {
            let scenario = String(command.1)
            #expect(scenarios.contains(scenario), "the README runs coexist-bench \(scenario), which it does not have")
            for option in command.2.matches(of: /--([a-z-]+)/) {
                #expect(help.stdout.contains("--\(option.1)"), "coexist-bench \(scenario) --\(option.1) is unknown")
            }
        }
    }
}
