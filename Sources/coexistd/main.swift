import CoexistConfiguration
import CoexistDaemon
import CoexistReporting
import CoexistRuntime
import CoexistSQLite

#if canImport(Glibc)
import Glibc
#endif

// coexistd: parse, wire, report. The work is in CoexistDaemon.
let commandLine: DaemonCommandLine
do {
    commandLine = try DaemonCommandLine(Array(CommandLine.arguments.dropFirst()))
} catch {
    // The mistake and where to look, not the whole usage (the mistake would scroll away).
    StandardStreams.error("coexistd: \(error.message)\nRun 'coexistd --help' for the options.")
    exit(ExitCode.usage.rawValue)
}
if commandLine.help {
    StandardStreams.out(DaemonCommandLine.usage)
    exit(ExitCode.success.rawValue)
}
if commandLine.version {
    StandardStreams.out(ProductVersion.text("coexistd", libraries: [("SQLite", Connection.libraryVersion)]))
    exit(ExitCode.success.rawValue)
}
switch commandLine.manual {
case .daemon?:
    StandardStreams.out(DaemonManual.daemon.roff, newline: false)
    exit(ExitCode.success.rawValue)
case .configuration?:
    StandardStreams.out(DaemonManual.configuration.roff, newline: false)
    exit(ExitCode.success.rawValue)
case nil:
    break
}
let configFile = commandLine.resolvedConfigFile()
// Before any thread uses SQLite: its memory statistics' one mutex would serialize every thread's allocations.
Connection.prepareLibraryForThreads()
// Signals are blocked before any other thread exists, so that only the signalfd receives them.
let signals: SignalReceiver
do {
    signals = try SignalReceiver()
} catch {
    StandardStreams.error("coexistd: \(error)")
    exit(ExitCode.software.rawValue)
}
let configuration: DaemonConfiguration
do {
    configuration = try DaemonConfiguration.load(file: configFile, commandLine: commandLine.entries)
    if commandLine.checkConfig {
        _ = try Daemon.check(configuration)
        if let note = try configuration.validateSocketDirectory(allowMissing: true) {
            StandardStreams.out("coexistd: note: \(note)")
        }
        StandardStreams.out("coexistd: configuration OK")
        exit(ExitCode.success.rawValue)
    }
} catch {
    let report = ErrorReport(error)
    StandardStreams.error("coexistd: \(report.message)")
    exit(report.exitCode.rawValue)
}
let logger = Logger(identifier: "coexistd", level: configuration.logLevel)
let daemon = Daemon(
    configuration: configuration,
    configFile: configFile,
    commandLine: commandLine.entries,
    logger: logger
)
if commandLine.once {
    do {
        guard let result = try daemon.runOnce(signals: signals) else {
            logger.notice("stopped by a signal after a committed step: the next run goes on from there")
            exit(ExitCode.success.rawValue)
        }
        logger.notice(
            "caught up: \(result.mirrored) mirrored, \(result.conflicts) conflicts, \(result.parked) parked, cursor \(result.cursor)"
        )
        exit(ExitCode.success.rawValue)
    } catch {
        let report = ErrorReport(error)
        logger.error(report.message)
        exit(report.exitCode.rawValue)
    }
}
exit(daemon.run(signals: signals).rawValue)
