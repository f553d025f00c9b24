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
    static func parse(_ command: any Subcommand.Type, _ arguments: [String]) throws(ArgumentParser.UsageError)
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
        lines.append("Run 'coexistctl <command> --help' for a command's options.")
        return lines.joined(separator: "\n")
    }

    static func run(_ command: any Subcommand.Type, _ arguments: [String]) -> ExitCode {
        if arguments.contains("--help") || arguments.contains("-h") {
            StandardStreams.out(command.spec.usage)
            return .success
        }
        do {
            return try command.run(arguments)
        } catch let error as ArgumentParser.UsageError {
            StandardStreams.error("coexistctl \(command.name): \(error.message)\n\n\(command.spec.usage)")
            return .usage
        } catch {
            let report = ErrorReport(error)
            StandardStreams.error("coexistctl \(command.name): \(report.message)")
            return report.exitCode
        }
    }
}
