import CoexistBridge
import CoexistConfiguration
import CoexistLegacyStore
import CoexistModel
import CoexistRuntime
import CoexistSQLite
import CoexistStore

/// The store a command works on: a positional path, `--database`, or the daemon's `--config` file — the
/// same options coexistd takes.
struct StoreTarget {
    let database: String
    let model: String?
    let overrides: SchemaOverrides
    /// The bridge's settings (author, conflict policy): a repair writes as the daemon does.
    let bridge: BridgeConfiguration
    /// How the daemon opens the file for writing.
    let openOptions: OpenOptions
    /// Declared transforms of migration steps (`[migration FROM -> TO]`).
    let transforms: [StepTransform]

    /// `--database` and `--config`: the store (besides a positional STORE) and coexistd's configuration, as
    /// every command that works on a store through the daemon's settings lists them.
    static let optionSpecs: [OptionSpec] = [
        .value("database", "PATH", "the store, instead of STORE (as coexistd's --database)"),
        .value(
            "config",
            "FILE",
            "coexistd's configuration file: the store, model, schema overrides and bridge settings (author, "
                + "conflict policy) it names, read as coexistd reads them; STORE, --database and --model override it"
        ),
    ]

    /// What `--model` names for a command that reads the store through the bridge, and its default.
    static let modelHelp =
        "an .xcdatamodeld folder (its current version), an .xcdatamodel folder or a contents file; default: the "
        + "configuration's model, else the store's own Z_MODELCACHE"

    /// `--model PATH`: the model the command works with, described by `help`.
    static func modelSpec(_ help: String = "the model: " + StoreTarget.modelHelp) -> OptionSpec {
        .value("model", "PATH", help)
    }

    /// The store of `parsed`: its positional argument number `position`, `--database` or `--config`.
    init(_ parsed: ArgumentParser, position: Int = 0) throws {
        var entries: [ConfigEntry] = []
        if parsed.positionals.count > position {
            let path = parsed.positionals[position]
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
        bridge = configuration.bridge
        openOptions = configuration.openOptions
        transforms = configuration.transforms
    }
}

/// A bridge engine that writes, for the commands that repair: under the daemon's own lock (refused, exit
/// 75, while a coexistd serves the file), with the daemon's settings, on a store the bridge has run on.
struct BridgeWriter {
    let identity: DatabaseFileIdentity
    let engine: SyncEngine

    /// With `bootstrap`, a store the bridge never ran on gets what coexistd's first start gives it: the
    /// new schema, the bridge's tables and the initial sync (progress on a terminal); an interrupted initial
    /// sync is finished in any case, as coexistd would on its start.
    init(_ target: StoreTarget, bootstrap: Bool = false) throws {
        let probe = try LegacyStore(path: target.database)
        guard try bootstrap || probe.connection.tableExists("coexist_bridge") else {
            throw BridgeError.notBridged(
                "\(target.database): the bridge has never run on this store (verify --bootstrap sets it up)"
            )
        }
        identity = try DatabaseFileIdentity(path: target.database)
        try identity.serveExclusively()
        let model = try target.model.map { try XCDataModelReader.read(path: $0) }
        engine = try SyncEngine(
            connection: try Connection(path: target.database, options: target.openOptions),
            model: model,
            overrides: target.overrides,
            configuration: target.bridge
        )
        engine.report = { StandardStreams.error("coexistctl: \($0)") }
        // As coexistd's start: a first (bootstrap) or interrupted initial sync is carried through before
        // anything else is written.
        let line = ProgressLine()
        if try engine.initialSyncIfNeeded(progress: { progress in
            line.update("initial sync \(progress.summary)", fraction: progress.fraction)
        }) {
            line.finish()
            StandardStreams.error("coexistctl: initial sync of \(target.database) done")
        }
    }
}
