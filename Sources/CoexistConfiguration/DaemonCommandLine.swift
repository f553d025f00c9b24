public import CoexistRuntime

#if canImport(Glibc)
import Glibc
#endif

/// coexistd's command line: `--config PATH`, `--once`, `--check-config`, `--version`, the manual pages,
/// and every configuration key as an option (`--database PATH`, `--conflict-policy new-wins`), which
/// overrides the file. Its parser, `--help` and manual page are made from ``spec``.
public struct DaemonCommandLine: Sendable {
    /// Which manual page to print.
    public enum Manual: Sendable { case daemon, configuration }

    /// The configuration file given with `--config`, if any (see ``resolvedConfigFile(exists:)``).
    public var configFile: String?
    /// Mirror what is pending, then exit 0.
    public var once = false
    /// Validate the configuration, then exit 0 (or 78).
    public var checkConfig = false
    /// Print usage and exit 0.
    public var help = false
    /// Print the version and exit 0.
    public var version = false
    /// Print a manual page (roff) and exit 0.
    public var manual: Manual?
    /// Configuration keys given as options, in the table's order.
    public var entries: [ConfigEntry] = []

    /// The file read when no `--config` is given and it exists.
    public static let defaultConfigFile = "/etc/coexist/coexistd.conf"

    /// The heading the configuration keys are listed under.
    static let keysGroup = "configuration keys (each overrides the file's; see coexistd.conf(5))"

    /// coexistd's interface: its own options, then every configuration key.
    public static let spec = CommandSpec(
        command: "coexistd",
        synopsis: [
            "[--config PATH] [--once | --check-config] [--KEY VALUE ...]", "--version | --help | --man | --man-config",
        ],
        description: """
            Mirrors every change between the Core Data tables and the new schema of one SQLite file, and serves
            change events on a Unix socket. Without --config it reads the file $\(configEnvironment) names (none
            when it is empty), else \(defaultConfigFile) when that exists. Every configuration key is also an
            option, overriding the file.
            """,
        options: [
            .value(
                "config",
                "PATH",
                "the configuration file (default: $\(configEnvironment) when set, empty for none; else "
                    + "\(defaultConfigFile) when it exists)"
            ),
            .flag("once", "mirror everything pending, then exit 0"),
            .flag(
                "check-config",
                "validate the configuration and the store without writing anything, then exit (0, or 78 naming file:line)"
            ),
            .flag("version", "print the version, the SQLite library's and the build, then exit"),
            .flag("man", "print the coexistd(8) manual page (roff: man -l) and exit"),
            .flag("man-config", "print the coexistd.conf(5) manual page (roff) and exit"),
        ]
            + DaemonConfiguration.table.map { key in
                .value(key.name, "VALUE", key.doc + (key.reloadable ? " (reload)" : ""), group: keysGroup)
            }
    )

    /// The usage text (`--help`).
    public static var usage: String { spec.usage }

    /// Parses `arguments` (without the program name).
    public init(_ arguments: [String]) throws(ArgumentParser.UsageError) {
        if arguments.contains("-h") || arguments.contains("--help") {
            help = true
            return
        }
        let parsed = try ArgumentParser(arguments, spec: Self.spec)
        if let extra = parsed.positionals.first { throw ArgumentParser.UsageError("unexpected argument \(extra)") }
        configFile = parsed.option("config")
        once = parsed.flag("once")
        checkConfig = parsed.flag("check-config")
        version = parsed.flag("version")
        if parsed.flag("man") { manual = .daemon }
        if parsed.flag("man-config") {
            guard manual == nil else { throw ArgumentParser.UsageError("give one of --man, --man-config") }
            manual = .configuration
        }
        if once && checkConfig { throw ArgumentParser.UsageError("give one of --once, --check-config") }
        for key in DaemonConfiguration.table {
            guard let value = parsed.option(key.name) else { continue }
            entries.append(ConfigEntry(key: key.name, value: value, file: "command line", line: nil))
        }
    }

    /// The environment variable naming the configuration file when no `--config` is given (empty: none).
    public static let configEnvironment = "COEXISTD_CONFIG"

    /// The configuration file to read: `--config`'s, else `COEXISTD_CONFIG`'s (`environment`; empty: none),
    /// else ``defaultConfigFile`` when `exists` says it is there, else none (the defaults and the command
    /// line alone).
    public func resolvedConfigFile(environment: String?, exists: (String) -> Bool) -> String? {
        if let configFile { return configFile }
        if let environment { return environment.isEmpty ? nil : environment }
        return exists(Self.defaultConfigFile) ? Self.defaultConfigFile : nil
    }

    /// The configuration file to read, from the process's environment and file system.
    public func resolvedConfigFile() -> String? {
        resolvedConfigFile(environment: getenv(Self.configEnvironment).map { String(cString: $0) }) {
            access($0, F_OK) == 0
        }
    }
}
