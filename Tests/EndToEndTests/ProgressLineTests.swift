import CoexistHistory
import CoexistLegacyStore
import Foundation
import TestSupport
import Testing

/// Progress bars are drawn on a terminal only, and never run into a message: `coexistctl migrate` (whose
/// bar shows from its first step) under a pseudo-terminal made by util-linux's `script`, and without one.
@Suite struct ProgressLineTests {
    /// A demo store at TaskModel (1.0.0), which `migrate` takes to TaskModel 2 with a warning on stderr.
    func v1Store(in directory: TemporaryDirectory) throws -> String { try DemoStore.createVersion1(in: directory).path }

    /// `product` with `arguments` run on a pseudo-terminal (`script`: -q no banner, -e the command's exit
    /// status, -f output as it comes; the pty merges both streams), `columns` wide when given.
    static func onTerminal(
        _ product: String,
        _ arguments: [String],
        columns: Int? = nil,
        environment: [String: String]? = nil
    ) throws -> ProductProcess.Result {
        let command = ([ProductProcess.productsDirectory + "/" + product] + arguments).map(quoted)
        let width = columns.map { "stty cols \($0) && " } ?? ""
        return try ProductProcess.run(
            path: "/usr/bin/timeout",
            ["-s", "KILL", "300", "script", "-qefc", width + command.joined(separator: " "), "/dev/null"],
            environment: environment
        )
    }

    @Test func aTerminalGetsABarThatMessagesEraseFirst() throws {
        let directory = try TemporaryDirectory()
        let path = try v1Store(in: directory)
        let result = try Self.onTerminal("coexistctl", ["migrate", path, "--model", Fixtures.demoModel])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let erase = "\r\u{1B}[K"
        #expect(
            result.stdout.contains(erase + "[##########          ] 50% migrate: "),
            "\(result.stdout.debugDescription)"
        )
        // Every message starts a line of its own: the bar is erased before it is written.
        for message in ["coexistctl: warning:", "backup: "] {
            let ranges = result.stdout.ranges(of: message)
            #expect(!ranges.isEmpty, "\(message) is missing from \(result.stdout.debugDescription)")
            for range in ranges {
                let before = result.stdout[..<range.lowerBound]
                #expect(
                    // A terminal ends lines with CR LF.
                    before.isEmpty || before.unicodeScalars.last == "\n" || before.hasSuffix(erase),
                    "\(message) follows \(before.suffix(60).debugDescription)"
                )
            }
        }
    }

    /// A bar fits the terminal's width (a line that wraps cannot be redrawn in place).
    @Test func aBarFitsANarrowTerminal() throws {
        let directory = try TemporaryDirectory()
        let path = try v1Store(in: directory)
        let result = try Self.onTerminal("coexistctl", ["migrate", path, "--model", Fixtures.demoModel], columns: 40)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let bars = result.stdout.components(separatedBy: "\r\u{1B}[K").filter { $0.hasPrefix("[") }
        #expect(!bars.isEmpty, "\(result.stdout.debugDescription)")
        for bar in bars {
            let drawn = bar.split(separator: "\r", maxSplits: 1).first ?? ""
            #expect(drawn.count <= 39, "\(drawn.debugDescription)")
        }
    }

    /// The initial sync of `coexistd --once`, `verify` and a replay's dry run draw their bars, each with
    /// its fraction, on a terminal (drawn from the first update: `COEXIST_PROGRESS_AFTER_MS=0`).
    @Test func longOperationsDrawTheirBars() throws {
        let directory = try TemporaryDirectory()
        let shared = try SharedStore.create(in: directory)
        let path = shared.legacy.path
        try shared.legacy.save(SaveMetadata(author: "old-app")) { save in
            for index in 0..<2_500 {
                var values = DemoStore.mandatoryValues(for: "Task", in: shared.legacy)
                values["id"] = .uuid([UInt8](repeating: 7, count: 14) + [UInt8(index >> 8), UInt8(index & 0xFF)])
                values["title"] = .string("task \(index)")
                _ = try save.insert("Task", values)
            }
        }
        var environment = ProcessInfo.processInfo.environment
        environment["COEXIST_PROGRESS_AFTER_MS"] = "0"
        for name in ["INVOCATION_ID", "JOURNAL_STREAM", "SYSTEMD_EXEC_PID", "NOTIFY_SOCKET"] { environment[name] = nil }
        func onTerminal(_ product: String, _ arguments: [String]) throws -> String {
            let result = try Self.onTerminal(product, arguments, environment: environment)
            #expect(result.status == 0, "\(arguments): \(result.stdout.suffix(500))")
            return result.stdout
        }
        let sync = try onTerminal(
            "coexistd",
            ["--database", path, "--socket", directory.file("c.sock"), "--initial-sync-chunk", "100", "--once"]
        )
        #expect(sync.contains(/\[#* *\] [0-9]+% initial sync legacy-to-new/), "\(sync.suffix(600).debugDescription)")
        let verify = try onTerminal("coexistctl", ["verify", path])
        #expect(
            verify.contains(/\[#{7,8} *\] [34][0-9]% verify: compared 1000 of 25[0-9]{2} objects/),
            "\(verify.debugDescription)"
        )
        let replay = try onTerminal(
            "coexistctl",
            ["history", "replay", path, "--from", "1", "--into", "new", "--dry-run"]
        )
        #expect(replay.contains("% reading the range: token "), "\(replay.debugDescription)")
        #expect(replay.contains(/\] [0-9]+% comparing: 1000 of 25[0-9]{2} objects/), "\(replay.debugDescription)")
    }

    @Test func noTerminalGetsNoBar() throws {
        let directory = try TemporaryDirectory()
        let path = try v1Store(in: directory)
        let result = try ProductProcess.run("coexistctl", ["migrate", path, "--model", Fixtures.demoModel])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("coexistctl: warning:"))
        #expect(!result.stderr.contains("\u{1B}") && !result.stdout.contains("\u{1B}"), "\(result.stderr)")
    }

    /// `text` quoted for the shell `script` runs the command with.
    static func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }
}
