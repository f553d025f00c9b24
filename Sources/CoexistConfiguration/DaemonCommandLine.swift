public import CoexistRuntime

/// coexistd's command line: `--config PATH`, `--once`, `--check-config`, and every configuration key as an
/// option (`--database PATH`, `--conflict-policy new-wins`), which overrides the file.
public struct DaemonCommandLine: Sendable {
    /// The configuration file, if any.
    public var configFile: String?
    /// Mirror what is pending, then exit 0.
    public var once = false
    /// Validate the configuration, then exit 0 (or 78).
    public var checkConfig = false
    /// Print usage and exit.
    public var help = false
    /// Configuration keys given as options.
    public var entries: [ConfigEntry] = []

    /// The usage text.
    public static let usage = """
        usage: coexistd [--config PATH] [--once] [--check-config] [--KEY VALUE ...]

        Mirrors every change between the Core Data tables and the new schema of one SQLite file, and serves
        change events on a Unix socket. Every configuration key (see config/coexistd.conf) is also an
        option, overriding the file: --database PATH, --model PATH, --socket PATH, --socket-mode 0660,
        --conflict-policy later-wins|legacy-wins|new-wins, --batch-size N, --log-level LEVEL, ...

          --config PATH    the configuration file
          --once           mirror everything pending, then exit 0
          --check-config   validate the configuration and exit (0, or 78 naming file:line)
        """

    /// Parses `arguments` (without the program name).
    public init(_ arguments: [String]) throws(ArgumentParser.UsageError) {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("--") else { throw ArgumentParser.UsageError("unexpected argument \(argument)") }
            var name = String(argument.dropFirst(2))
            var value: String?
            if let equals = name.firstIndex(of: "=") {
                value = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            switch name {
            case "once": once = true
            case "check-config": checkConfig = true
            case "help": help = true
            case _ where name == "config" || DaemonConfiguration.keys.contains(name):
                if value == nil {
                    guard index < arguments.count else { throw ArgumentParser.UsageError("--\(name) needs a value") }
                    value = arguments[index]
                    index += 1
                }
                if name == "config" {
                    guard configFile == nil else { throw ArgumentParser.UsageError("--config is given twice") }
                    configFile = value
                } else {
                    guard !entries.contains(where: { $0.key == name }) else {
                        throw ArgumentParser.UsageError("--\(name) is given twice")
                    }
                    entries.append(ConfigEntry(key: name, value: value ?? "", file: "command line", line: nil))
                }
            default:
                throw ArgumentParser.UsageError("unknown option --\(name)")
            }
        }
    }
}
