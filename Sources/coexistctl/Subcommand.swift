import CoexistReporting
import CoexistRuntime

/// One `coexistctl` subcommand: its name, one-line summary, interface and entry point.
protocol Subcommand {
    /// The word after `coexistctl`.
    static var name: String { get }
    /// One line for the overview.
    static var summary: String { get }
    /// Synopsis, description and option table: the parser, `--help` and the manual page are made from it.
    static var spec: CommandSpec { get }
    /// Runs the command with the arguments after its name; returns the exit code.
    static func run(_ arguments: [String]) throws -> ExitCode
}

/// Help texts and the error-to-exit-code boundary shared by every subcommand.
enum Help {
    /// The option table of `command` parsed from `arguments`.
    static func parse(
        _ command: any Subcommand.Type,
        _ arguments: [String]
    ) throws(ArgumentParser.UsageError)
        -> ArgumentParser
    {
        try ArgumentParser(arguments, spec: command.spec)
    }

    static func overview(_ commands: [any Subcommand.Type]) -> String {
        var lines = ["usage: coexistctl <command> [options]", "", "commands:"]
        let width = commands.map { $0.name.count }.max() ?? 0
        for command in commands {
            lines.append(
                "  " + command.name + String(repeating: " ", count: width - command.name.count + 2) + command.summary
            )
        }
        lines.append("")
        lines.append("Run 'coexistctl <command> --help' for a command's options; 'coexistctl --version' for the")
        lines.append("version; 'coexistctl --man' prints the manual page coexistctl(1) (man -l).")
        return lines.joined(separator: "\n")
    }

    /// coexistctl(1): every command's synopsis, description and options, from the tables `--help` prints.
    static func manual(_ commands: [any Subcommand.Type]) -> ManualPage {
        ManualPage(
            name: "coexistctl",
            section: 1,
            summary: "inspect, verify, repair and migrate coexist stores; follow coexistd",
            source: ProductVersion.manualSource,
            manual: "User Commands",
            synopsis: ["COMMAND [OPTIONS]", "--version | --help | --man"],
            sections: [
                .text(
                    "Description",
                    """
                    The operator's tool of coexist, which lets a Core Data store and a new schema derived from the
                    same model live on one SQLite file. Commands that inspect open the store read-only and never
                    write it; those that write refuse (exit 75) while a coexistd serves the file, unless they go
                    through it.
                    """
                ),
                .commands("Commands", commands.map { $0.spec }),
                .definitions("Exit status", ExitCode.allCases.map { (String($0.rawValue), $0.summary) }),
                .text("See also", "coexistd(8), coexistd.conf(5)"),
            ]
        )
    }

    static func run(_ command: any Subcommand.Type, _ arguments: [String]) -> ExitCode {
        if arguments.contains("--help") || arguments.contains("-h") {
            StandardStreams.out(command.spec.usage)
            return .success
        }
        do {
            return try command.run(arguments)
        } catch let error as ArgumentParser.UsageError {
            // The mistake and where to look, not the whole usage (the mistake would scroll away).
            StandardStreams.error(
                "coexistctl \(command.name): \(error.message)\nRun 'coexistctl \(command.name) --help' for its options."
            )
            return .usage
        } catch {
            let report = ErrorReport(error)
            StandardStreams.error("coexistctl \(command.name): \(report.message)")
            return report.exitCode
        }
    }
}
