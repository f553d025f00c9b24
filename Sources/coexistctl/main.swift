import CoexistRuntime
import CoexistSQLite

#if canImport(Glibc)
import Glibc
#endif

// coexistctl: the operator's tool. Each subcommand is a small type; the work is in the libraries.
let commands: [any Subcommand.Type] = [
    InspectCommand.self, HistoryCommand.self, SchemaCommand.self, VerifyCommand.self, StatusCommand.self,
    TailCommand.self, WaitCommand.self, ConsumersCommand.self, ParkedCommand.self, ConflictsCommand.self,
    CreateCommand.self, DemoCommand.self, MigrateCommand.self,
]

let arguments = Array(CommandLine.arguments.dropFirst())
guard let name = arguments.first else {
    StandardStreams.error(Help.overview(commands))
    exit(ExitCode.usage.rawValue)
}
switch name {
case "--help", "-h", "help":
    StandardStreams.out(Help.overview(commands))
    exit(ExitCode.success.rawValue)
case "--version":
    StandardStreams.out(ProductVersion.text("coexistctl", libraries: [("SQLite", Connection.libraryVersion)]))
    exit(ExitCode.success.rawValue)
case "--man":
    StandardStreams.out(Help.manual(commands).roff, newline: false)
    exit(ExitCode.success.rawValue)
default:
    break
}
guard let command = commands.first(where: { $0.name == name }) else {
    let hint = TextWrap.suggestion(for: name, among: commands.map { $0.name }).map { " (did you mean \($0)?)" }
    StandardStreams.error(
        "coexistctl: unknown command \"\(name)\"" + (hint ?? "") + "\nRun 'coexistctl --help' for the list of commands."
    )
    exit(ExitCode.usage.rawValue)
}
exit(Help.run(command, Array(arguments.dropFirst())).rawValue)
