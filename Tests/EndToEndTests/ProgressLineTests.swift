import Foundation
import TestSupport
import Testing

/// Progress bars are drawn on a terminal only, and never run into a message: `coexistctl migrate` (whose
/// bar shows from its first step) under a pseudo-terminal made by util-linux's `script`, and without one.
@Suite struct ProgressLineTests {
    /// A demo store at TaskModel (1.0.0), which `migrate` takes to TaskModel 2 with a warning on stderr.
    func v1Store(in directory: TemporaryDirectory) throws -> String {
        let path = directory.file("Tasks.sqlite")
        let created = try ProductProcess.run(
            "coexistctl",
            ["create", path, "--model", Fixtures.demoModel + "/TaskModel.xcdatamodel"]
        )
        #expect(created.status == 0, "\(created.stderr)")
        return path
    }

    @Test func aTerminalGetsABarThatMessagesEraseFirst() throws {
        let directory = try TemporaryDirectory()
        let path = try v1Store(in: directory)
        let command = [
            ProductProcess.productsDirectory + "/coexistctl", "migrate", path, "--model", Fixtures.demoModel,
        ]
        // -q: no banner; -e: the command's exit status; -f: output as it comes; the pty merges both streams.
        let result = try ProductProcess.run(
            path: "/usr/bin/timeout",
            ["-s", "KILL", "120", "script", "-qefc", command.map(Self.quoted).joined(separator: " "), "/dev/null"]
        )
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
