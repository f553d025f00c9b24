import CoexistBridge
import CoexistConfiguration
import CoexistProtocol
import CoexistRuntime
import FoundationEssentials

/// The daemon's socket for a command: `--socket PATH`, else the `socket` of `--config FILE`, else the default.
/// A configuration file named is read whole, so that one coexistd would refuse is refused here too (78,
/// file:line), even when `--socket` overrides its socket as it would coexistd's.
enum SocketTarget {
    /// The options that name the daemon: its socket, its configuration file, or the database it serves;
    /// every command that talks to coexistd lists these.
    static let optionSpecs: [OptionSpec] = [
        .value("socket", "PATH", "the Unix socket coexistd listens on (default \(DaemonConfiguration().socket))"),
        .value(
            "config",
            "FILE",
            "the socket of coexistd's configuration file FILE, which is read whole: a file coexistd would refuse "
                + "is refused here too; --socket overrides its socket"
        ),
        .value("database", "FILE", "the coexistd serving FILE, found from the file itself"),
    ]

    /// The daemon's socket from `--socket`, `--config` or `--database`; one of them, or `--socket` with
    /// `--config`.
    static func path(_ parsed: ArgumentParser) throws -> String {
        let given = ["socket", "config", "database"].filter { parsed.option($0) != nil }
        guard given.count <= 1 || given == ["socket", "config"] else {
            throw ArgumentParser.UsageError("give one of --socket, --config, --database")
        }
        if let database = parsed.option("database") { return try ServingDaemon.socket(ofDatabase: database) }
        let configured = try parsed.option("config").map { try DaemonConfiguration.read(file: $0) }
        return parsed.option("socket") ?? configured?.socket ?? DaemonConfiguration().socket
    }
}
