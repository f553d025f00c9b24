public import CoexistBridge
public import CoexistEvents
public import CoexistModel
public import CoexistRuntime
public import CoexistSQLite
public import CoexistStore

#if canImport(Glibc)
import Glibc
#endif

/// coexistd's configuration: one file (`key = value`, `#` comments, `[entity NAME]` sections), every key
/// also accepted on the command line (`--database PATH`), the command line winning. Every key and its
/// default is documented in `config/coexistd.conf`.
public struct DaemonConfiguration: Sendable {
    /// The shared SQLite file.
    public var database: String = ""
    /// The app's model (`.xcdatamodeld`); nil to use the store's own.
    public var model: String?
    /// The Unix socket subscribers connect to (ignored when systemd passes one).
    public var socket: String = "/run/coexist/coexist.sock"
    /// The socket file's mode.
    public var socketMode: UInt32 = 0o660
    /// The socket file's group (numeric), nil to keep the daemon's.
    public var socketGroup: UInt32?
    /// Bridge settings: conflict policy, batch size, author, initial-sync chunk.
    public var bridge = BridgeConfiguration()
    /// History older than this (nanoseconds) and already mirrored is pruned; 0 keeps everything.
    public var historyRetention: UInt64 = 0
    /// The fallback periodic check when no inotify event arrives (nanoseconds).
    public var pollInterval: UInt64 = 1_000_000_000
    /// How often parked transactions are tried again when nothing else prompts it (nanoseconds).
    public var parkedRetryInterval: UInt64 = 30_000_000_000
    /// How long a blocked statement retries before SQLITE_BUSY (milliseconds).
    public var busyTimeoutMilliseconds = 5_000
    /// Each connection's SQLite page cache, in KiB.
    public var cacheKilobytes = 8_192
    /// Log threshold.
    public var logLevel: LogLevel = .info
    /// Name overrides of the new schema.
    public var overrides = SchemaOverrides()
    /// Event server limits and access control.
    public var limits = EventServer.Limits()
    /// A durable consumer not heard from for longer than this (nanoseconds) no longer holds history back
    /// from pruning (logged) nor counts against `max-consumers`; 0: never. Default 7 days.
    public var consumerExpiry: UInt64 {
        get { limits.consumerExpiry }
        set { limits.consumerExpiry = newValue }
    }
    /// Where each key was set, for messages (`file:line` or `command line: --key`).
    public var locations: [String: String] = [:]
    /// Where each entity override was set, by entity name and key (`[entity Task]` `column.title`).
    public var overrideLocations: [String: [String: String]] = [:]

    /// Keys a SIGHUP can change without a restart.
    public static let reloadableKeys: Set<String> = [
        "conflict-policy", "batch-size", "initial-sync-chunk", "history-retention", "poll-interval", "log-level",
        "parked-retry-interval", "allow-uids", "allow-gids", "max-clients", "max-line-length", "request-timeout",
        "queue-limit",
        "queue-bytes", "total-queue-bytes", "max-pending-requests", "max-consumers", "heartbeat-interval",
        "consumer-expiry",
    ]

    /// Every top-level key.
    public static let keys: Set<String> = reloadableKeys.union([
        "database", "model", "socket", "socket-mode", "socket-group", "busy-timeout", "cache-size", "author",
    ])

    /// Creates the defaults.
    public init() {}

    /// How the daemon's connections open the database.
    public var openOptions: OpenOptions {
        OpenOptions(busyTimeoutMilliseconds: busyTimeoutMilliseconds, cacheKilobytes: cacheKilobytes)
    }

    /// How the event service opens the database: read-only (it never writes; the bridge service does).
    public var eventOpenOptions: OpenOptions {
        var options = OpenOptions.readOnly
        options.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        options.cacheKilobytes = cacheKilobytes
        return options
    }

    /// Reads the file (when given) and applies the command-line options over it.
    ///
    /// Throws ``ConfigError`` naming `file:line` (or the command-line option) for an unknown key, a bad value,
    /// a missing file or database, and a socket directory the daemon cannot write.
    public static func load(file: String?, commandLine: [ConfigEntry]) throws(ConfigError) -> DaemonConfiguration {
        var configuration = DaemonConfiguration()
        let fileEntries = try file.map { path throws(ConfigError) in try ConfigFile.read(path: path) } ?? []
        for entry in fileEntries + commandLine { try configuration.apply(entry) }
        try configuration.validate()
        return configuration
    }

    /// Reads a configuration file and applies every entry (so an unknown key or a bad value is an error with
    /// file:line), without the checks that look at the file system: for the commands that only need the
    /// socket's path, which may be run by users who cannot read the database.
    public static func read(file: String) throws(ConfigError) -> DaemonConfiguration {
        var configuration = DaemonConfiguration()
        for entry in try ConfigFile.read(path: file) { try configuration.apply(entry) }
        return configuration
    }

    /// Parses configuration text and applies every entry, without the checks that look at the file system
    /// (the database, the socket directory): for tests and fuzzing.
    public static func parse(_ text: String, file: String) throws(ConfigError) -> DaemonConfiguration {
        var configuration = DaemonConfiguration()
        for entry in try ConfigFile.parse(text, file: file) { try configuration.apply(entry) }
        return configuration
    }

    mutating func apply(_ entry: ConfigEntry) throws(ConfigError) {
        if let section = entry.section {
            try applyEntityOverride(section, entry)
            return
        }
        guard Self.keys.contains(entry.key) else {
            throw ConfigError(
                entry,
                "unknown key \"\(entry.key)\" (known keys: \(Self.keys.sorted().joined(separator: ", ")))"
            )
        }
        locations[entry.key] = entry.location
        switch entry.key {
        case "database": database = try entry.nonEmpty()
        case "model": model = entry.value.isEmpty ? nil : entry.value
        case "socket": socket = try entry.nonEmpty()
        case "socket-mode": socketMode = try entry.fileMode()
        case "socket-group": socketGroup = entry.value.isEmpty ? nil : try entry.integerList().first
        case "conflict-policy":
            let name = try entry.choice(ConflictPolicy.allCases.map(\.rawValue))
            bridge.conflictPolicy = ConflictPolicy(rawValue: name) ?? .laterWins
        case "batch-size": bridge.batchSize = try entry.integer(in: 1...100_000)
        case "initial-sync-chunk": bridge.initialSyncChunk = try entry.integer(in: 1...1_000_000)
        case "history-retention": historyRetention = try entry.duration()
        case "poll-interval":
            pollInterval = try entry.duration()
            guard pollInterval >= 1_000_000 else { throw ConfigError(entry, "poll-interval must be at least 1ms") }
        case "parked-retry-interval":
            parkedRetryInterval = try entry.duration()
            guard (1_000_000_000...3_600_000_000_000).contains(parkedRetryInterval) else {
                throw ConfigError(entry, "parked-retry-interval must be from 1s to 1h")
            }
        case "busy-timeout": busyTimeoutMilliseconds = Int(try entry.duration() / 1_000_000)
        case "cache-size": cacheKilobytes = try entry.integer(in: 256...4_194_304)
        case "log-level":
            guard let level = LogLevel(name: entry.value) else {
                throw ConfigError(
                    entry,
                    "log-level must be one of error, warning, notice, info, debug, not \"\(entry.value)\""
                )
            }
            logLevel = level
        case "author": bridge.author = try entry.nonEmpty()
        case "allow-uids": limits.allowUIDs = try entry.integerList()
        case "allow-gids": limits.allowGIDs = try entry.integerList()
        case "max-clients": limits.maxClients = try entry.integer(in: 1...100_000)
        case "max-line-length": limits.maxLineLength = try entry.integer(in: 256...16_777_216)
        case "request-timeout":
            limits.requestTimeout = try entry.duration()
            guard (100_000_000...3_600_000_000_000).contains(limits.requestTimeout) else {
                throw ConfigError(entry, "request-timeout must be from 100ms to 1h")
            }
        case "queue-limit": limits.queueLimit = try entry.integer(in: 16...10_000_000)
        case "queue-bytes": limits.queueBytes = try entry.integer(in: 65_536...(1 << 40))
        case "total-queue-bytes": limits.totalQueueBytes = try entry.integer(in: 1 << 20...(1 << 50))
        case "max-pending-requests": limits.maxPendingRequests = try entry.integer(in: 1...1_000_000)
        case "max-consumers": limits.maxConsumers = try entry.integer(in: 0...1_000_000)
        case "heartbeat-interval":
            limits.heartbeatInterval = try entry.duration()
            guard limits.heartbeatInterval >= 100_000_000 else {
                throw ConfigError(entry, "heartbeat-interval must be at least 100ms")
            }
        case "consumer-expiry": consumerExpiry = try entry.duration()
        default: throw ConfigError(entry, "unknown key \"\(entry.key)\"")
        }
    }

    private mutating func applyEntityOverride(_ section: String, _ entry: ConfigEntry) throws(ConfigError) {
        let words = section.split(separator: " ")
        guard words.count == 2, words[0] == "entity" else {
            throw ConfigError(entry, "unknown section [\(section)] (sections are [entity NAME])")
        }
        let entity = String(words[1])
        guard SQLIdentifier.isPlain(entity) else {
            throw ConfigError(entry, "[\(section)]: \(String(reflecting: entity)) is not an entity name")
        }
        var override = overrides.entities[entity] ?? SchemaOverrides.Entity()
        switch entry.key {
        case "table": override.table = try Self.identifier(entry)
        case "identity": override.identity = try Self.identifier(entry)
        default:
            guard entry.key.hasPrefix("column."), entry.key.count > 7 else {
                throw ConfigError(
                    entry,
                    "unknown key \"\(entry.key)\" in [\(section)] (table, identity, column.PROPERTY)"
                )
            }
            let property = String(entry.key.dropFirst(7))
            guard SQLIdentifier.isPlain(property) else {
                throw ConfigError(entry, "\(String(reflecting: property)) is not a property name")
            }
            override.columns[property] = try Self.identifier(entry)
        }
        overrides.entities[entity] = override
        overrideLocations[entity, default: [:]][entry.key] = entry.location
    }

    /// A plain SQL identifier (``SQLIdentifier/isPlain(_:)``): a table or column name reaches SQL text only
    /// quoted, and only once it passes this check.
    static func identifier(_ entry: ConfigEntry) throws(ConfigError) -> String {
        guard SQLIdentifier.isPlain(entry.value) else {
            throw ConfigError(
                entry,
                "\(entry.key) must be a plain identifier (ASCII letters, digits and _, not starting with a digit), "
                    + "not \(String(reflecting: entry.value))"
            )
        }
        return entry.value
    }

    func validate() throws(ConfigError) {
        guard !database.isEmpty else {
            throw ConfigError(location: locations["database"] ?? "configuration", message: "database is required")
        }
        var info = stat()
        guard stat(database, &info) == 0 else {
            throw ConfigError(
                location: locations["database"] ?? "configuration",
                message: "database \(database) does not exist",
                kind: .missingInput
            )
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw ConfigError(
                location: locations["database"] ?? "configuration",
                message: "database \(database) is not a regular file"
            )
        }
        guard access(database, R_OK) == 0 else {
            throw ConfigError(
                location: locations["database"] ?? "configuration",
                message: "database \(database) cannot be read (\(String(cString: strerror(errno))))",
                kind: .missingInput
            )
        }
        if let model, access(model, R_OK) != 0 {
            throw ConfigError(
                location: locations["model"] ?? "configuration",
                message: "model \(model) cannot be read",
                kind: .missingInput
            )
        }
        // The socket path is never the database or one of its companion files: binding there would
        // refuse (only a stale socket is replaced), but say so here, with the line.
        var socketInfo = stat()
        if stat(socket, &socketInfo) == 0, (socketInfo.st_mode & S_IFMT) != S_IFSOCK {
            throw ConfigError(
                location: locations["socket"] ?? "defaults: socket",
                message: "socket \(socket) is an existing file that is not a socket; it is never replaced"
            )
        }
        for suffix in ["", "-wal", "-shm", "-journal"] where socket == database + suffix {
            throw ConfigError(
                location: locations["socket"] ?? "defaults: socket",
                message: "socket \(socket) is the database's own path"
            )
        }
        guard socket.utf8.count <= UnixListener.maximumPathLength else {
            throw ConfigError(
                location: locations["socket"] ?? "defaults",
                message: "socket path is longer than \(UnixListener.maximumPathLength) bytes"
            )
        }
    }

    /// Checks every `[entity NAME]` override against the model: the entity exists, `table` is set on a root
    /// entity (sub-entities share their root's table), `identity` names an attribute, and each `column.P`
    /// names a stored attribute or to-one relationship. Errors name the override's file and line.
    public func validateOverrides(against model: Model) throws(ConfigError) {
        for (name, override) in overrides.entities.sorted(by: { $0.key < $1.key }) {
            let where_ = overrideLocations[name] ?? [:]
            func location(_ key: String) -> String { where_[key] ?? where_.values.sorted().first ?? "configuration" }
            guard let entity = model.entity(named: name) else {
                throw ConfigError(
                    location: where_.values.sorted().first ?? "configuration",
                    message: "[entity \(name)]: the model has no entity \(name) (entities: "
                        + model.entities.map(\.name).sorted().prefix(20).joined(separator: ", ") + ")"
                )
            }
            if override.table != nil, entity.superentity != nil {
                throw ConfigError(
                    location: location("table"),
                    message: "[entity \(name)]: table can be set only on a root entity (\(name) shares the table of "
                        + "\(model.root(of: entity).name))"
                )
            }
            let attributes = Set(model.allAttributes(of: entity).filter { !$0.isTransient }.map(\.name))
            let toOnes = Set(
                model.allRelationships(of: entity).filter { !$0.isTransient && !$0.isToMany }.map(\.name)
            )
            if let identity = override.identity, !attributes.contains(identity) {
                throw ConfigError(
                    location: location("identity"),
                    message: "[entity \(name)]: identity names \(identity), which is not a stored attribute of \(name)"
                )
            }
            for property in override.columns.keys.sorted()
            where !attributes.contains(property) && !toOnes.contains(property) {
                throw ConfigError(
                    location: location("column." + property),
                    message: "[entity \(name)]: \(name) has no stored attribute or to-one relationship \(property)"
                )
            }
        }
    }

    /// Checks that the socket's directory exists and is writable (skipped under socket activation).
    public func validateSocketDirectory() throws(ConfigError) {
        let directory = socket.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        let path = directory.isEmpty ? "." : directory
        guard access(path, W_OK | X_OK) == 0 else {
            throw ConfigError(
                location: locations["socket"] ?? "defaults: socket",
                message: "socket directory \(path) is not writable (\(String(cString: strerror(errno))))"
            )
        }
    }

    /// The keys whose values differ from `other`'s, split into those a reload applies and those that need
    /// a restart.
    public func changes(from other: DaemonConfiguration) -> (reloadable: [String], restart: [String]) {
        var changed: [String] = []
        if database != other.database { changed.append("database") }
        if model != other.model { changed.append("model") }
        if socket != other.socket { changed.append("socket") }
        if socketMode != other.socketMode { changed.append("socket-mode") }
        if socketGroup != other.socketGroup { changed.append("socket-group") }
        if busyTimeoutMilliseconds != other.busyTimeoutMilliseconds { changed.append("busy-timeout") }
        if cacheKilobytes != other.cacheKilobytes { changed.append("cache-size") }
        if bridge.author != other.bridge.author { changed.append("author") }
        if overrides != other.overrides { changed.append("[entity …]") }
        if bridge.conflictPolicy != other.bridge.conflictPolicy { changed.append("conflict-policy") }
        if bridge.batchSize != other.bridge.batchSize { changed.append("batch-size") }
        if bridge.initialSyncChunk != other.bridge.initialSyncChunk { changed.append("initial-sync-chunk") }
        if historyRetention != other.historyRetention { changed.append("history-retention") }
        if pollInterval != other.pollInterval { changed.append("poll-interval") }
        if parkedRetryInterval != other.parkedRetryInterval { changed.append("parked-retry-interval") }
        if logLevel != other.logLevel { changed.append("log-level") }
        if limits.allowUIDs != other.limits.allowUIDs { changed.append("allow-uids") }
        if limits.allowGIDs != other.limits.allowGIDs { changed.append("allow-gids") }
        if limits.maxClients != other.limits.maxClients { changed.append("max-clients") }
        if limits.maxLineLength != other.limits.maxLineLength { changed.append("max-line-length") }
        if limits.requestTimeout != other.limits.requestTimeout { changed.append("request-timeout") }
        if limits.queueLimit != other.limits.queueLimit { changed.append("queue-limit") }
        if limits.queueBytes != other.limits.queueBytes { changed.append("queue-bytes") }
        if limits.totalQueueBytes != other.limits.totalQueueBytes { changed.append("total-queue-bytes") }
        if limits.maxPendingRequests != other.limits.maxPendingRequests { changed.append("max-pending-requests") }
        if limits.maxConsumers != other.limits.maxConsumers { changed.append("max-consumers") }
        if limits.heartbeatInterval != other.limits.heartbeatInterval { changed.append("heartbeat-interval") }
        if consumerExpiry != other.consumerExpiry { changed.append("consumer-expiry") }
        return (
            changed.filter { Self.reloadableKeys.contains($0) }, changed.filter { !Self.reloadableKeys.contains($0) }
        )
    }
}
