import CoexistConfiguration
import CoexistModel
import CoexistRuntime
import CoexistStore

/// The store a command works on: a positional path, `--database`, or the daemon's `--config` file — the
/// same options coexistd takes.
struct StoreTarget {
    let database: String
    let model: String?
    let overrides: SchemaOverrides

    init(_ parsed: ArgumentParser) throws {
        var entries: [ConfigEntry] = []
        if let path = parsed.positionals.first {
            entries.append(ConfigEntry(key: "database", value: path, file: "command line", line: nil))
        }
        if let path = parsed.option("database") {
            entries.append(ConfigEntry(key: "database", value: path, file: "command line", line: nil))
        }
        if let path = parsed.option("model") {
            entries.append(ConfigEntry(key: "model", value: path, file: "command line", line: nil))
        }
        guard parsed.option("config") != nil || !entries.filter({ $0.key == "database" }).isEmpty else {
            throw ArgumentParser.UsageError("name the store: STORE, --database PATH or --config FILE")
        }
        let configuration = try DaemonConfiguration.load(file: parsed.option("config"), commandLine: entries)
        database = configuration.database
        model = configuration.model
        overrides = configuration.overrides
    }
}
