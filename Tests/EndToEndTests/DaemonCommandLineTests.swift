import CoexistConfiguration
import CoexistRuntime
import Foundation
import TestSupport
import Testing

/// coexistd's command-line conventions: --version, -h, typos, the default configuration file.
@Suite struct DaemonCommandLineTests {
    @Test(arguments: [["coexistd", "--version"], ["coexistctl", "--version"]])
    func versionNamesTheReleaseSQLiteAndTheBuild(_ command: [String]) throws {
        let result = try ProductProcess.run(command[0], Array(command.dropFirst()))
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("\(command[0]) \(ProductVersion.number)\n"))
        #expect(result.stdout.contains("SQLite 3."))
        #expect(result.stdout.contains(" build"))
    }

    @Test(arguments: [["coexistd", "-h"], ["coexistd", "--help"], ["coexistctl", "-h"], ["coexistctl", "--help"]])
    func helpIsASuccess(_ command: [String]) throws {
        let result = try ProductProcess.run(command[0], Array(command.dropFirst()))
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("usage: \(command[0])"))
        #expect(result.stderr.isEmpty)
    }

    @Test func aMisspelledOptionGetsASuggestion() throws {
        let result = try ProductProcess.run("coexistd", ["--conflict-polcy", "new-wins"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("unknown option --conflict-polcy (did you mean --conflict-policy?)"))
        // Two lines: the mistake and where to look; the usage would push the mistake off the screen.
        #expect(result.stderr.split(separator: "\n").count == 2, "\(result.stderr)")
        #expect(result.stderr.contains("Run 'coexistd --help' for the options."))
        let typo = try ProductProcess.run("coexistctl", ["status", "--databse", "x"])
        #expect(typo.status == 64)
        #expect(
            typo.stderr
                == "coexistctl status: unknown option --databse (did you mean --database?)\n"
                + "Run 'coexistctl status --help' for its options.\n"
        )
    }

    @Test func coexistctlWithoutACommandIsAUsageErrorOnStandardError() throws {
        let result = try ProductProcess.run("coexistctl", [])
        #expect(result.status == 64)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("usage: coexistctl"))
    }

    /// Without --config, COEXISTD_CONFIG's file (none when empty), else /etc/coexist/coexistd.conf when it
    /// exists; --config always wins.
    @Test func theDefaultConfigurationFileIsReadWhenItExists() throws {
        let bare = try DaemonCommandLine(["--once"])
        let isDefault = { (path: String) in path == DaemonCommandLine.defaultConfigFile }
        #expect(bare.resolvedConfigFile(environment: nil, exists: isDefault) == "/etc/coexist/coexistd.conf")
        #expect(bare.resolvedConfigFile(environment: nil) { _ in false } == nil)
        #expect(bare.resolvedConfigFile(environment: "", exists: isDefault) == nil)
        #expect(bare.resolvedConfigFile(environment: "/srv/b.conf", exists: isDefault) == "/srv/b.conf")
        let given = try DaemonCommandLine(["--config", "/srv/a.conf"])
        #expect(given.resolvedConfigFile(environment: "/srv/b.conf") { _ in true } == "/srv/a.conf")
        #expect(throws: ArgumentParser.UsageError.self) { try DaemonCommandLine(["--once", "--check-config"]) }
    }
}
