import Foundation
import TestSupport
import Testing

/// The README's first command: the daemon on a demo store, a writer on each side, changes flowing both ways.
@Suite struct DemoCommandTests {
    @Test func demoShowsChangesFlowingBothWays() throws {
        let directory = try TemporaryDirectory()
        let result = try ProductProcess.run(
            "coexistctl",
            ["demo", "--directory", directory.path, "--steps", "2"],
            directory: Fixtures.repository
        )
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("legacy  ▶ token 1: inserted Task \"Legacy task 1\" into Errands"))
        #expect(result.stdout.contains("(coexistd), the new app's tasks: \"Legacy task 1\" (Errands)"))
        #expect(result.stdout.contains("\"New task 1\" priority 2 Z_OPT 2"))
        #expect(result.stdout.contains("equal: 5 objects on each side"))
        #expect(result.stderr.contains("coexistd stopped"))
    }

    /// A long demo summarises what it holds instead of printing whole tables: every line fits a wide
    /// terminal (a 300-step run once printed lines of 21,705 characters).
    @Test func aLongDemoSummarises() throws {
        let directory = try TemporaryDirectory()
        let result = try ProductProcess.run(
            "coexistctl",
            ["demo", "--directory", directory.path, "--steps", "40"],
            directory: Fixtures.repository
        )
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.allSatisfy { $0.count <= 240 }, "\(lines.max { $0.count < $1.count } ?? "")")
        #expect(result.stdout.contains(/… [0-9]+ more …/), "\(result.stdout.suffix(1_000))")
        #expect(!result.stdout.contains("{\""), "no raw status JSON")
    }
}
