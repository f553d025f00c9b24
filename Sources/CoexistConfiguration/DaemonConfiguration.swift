public import CoexistModel
public import CoexistRuntime
public import CoexistSQLite
import FoundationEssentials

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
    /// Whether coexistd migrates a store older than ``model`` at start (lightweight steps only).
    public var autoMigrate: AutoMigrate = .off
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
    public var limits = EventLimits()
    /// A durable consumer not heard from for longer than this (nanoseconds) no longer holds history back
    /// from pruning (logged) nor counts against `max-consumers`; 0: never. Default 7 days.
    public var consumerExpiry: UInt64 {
        get { limits.consumerExpiry }
        set { limits.consumerExpiry = newValue }
    }
    /// Where each key was set, for messages (`file:line` or `command line: --key`).
    public var locations: [String: String] = [:]
    /// The configuration file read, nil when everything came from the command line.
    public var file: String?
    /// Where each entity override was set, by entity name and key (`[entity Task]` `column.title`).
    public var overrideLocations: [String: [String: String]] = [:]
    /// Declared transforms of migration steps (`[migration FROM -> TO]` sections), in file order.
    public var transforms: [StepTransform] = []
    /// Publishing to NATS JetStream (the `[publish]` section).
    public var publish = PublishConfiguration()

    /// Keys a SIGHUP can change without a restart.
    public static let reloadableKeys = Set(table.filter(\.reloadable).map(\.name))

    /// Every top-level key.
    public static let keys = Set(table.map(\.name))

    /// Creates the defaults.
    public init() {}

    /// How the daemon's bridge connection opens the database (its statement journal in a temporary file:
    /// a pass's savepoints span thousands of rows).
    public var openOptions: OpenOptions {
        OpenOptions(
            busyTimeoutMilliseconds: busyTimeoutMilliseconds,
            cacheKilobytes: cacheKilobytes,
            temporariesInMemory: false
        )
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
        configuration.file = file
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
        if let section = entry.section, section.hasPrefix("migration ") {
            try applyTransform(section, entry)
            return
        }
        if entry.section == "publish" {
            try publish.apply(entry)
            return
        }
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
        guard let key = Self.keysByName[entry.key] else { throw ConfigError(entry, "unknown key \"\(entry.key)\"") }
        try key.apply(&self, entry)
    }

    private mutating func applyEntityOverride(_ section: String, _ entry: ConfigEntry) throws(ConfigError) {
        let words = section.split(separator: " ")
        guard words.count == 2, words[0] == "entity" else {
            throw ConfigError(
                entry,
                "unknown section [\(section)] (sections are [entity NAME], [migration FROM -> TO] and [publish])"
            )
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

    /// `[migration FROM -> TO]` `Entity.property = $source.key.path | constant`: a declared transform of
    /// that step (see ``StepTransform``).
    private mutating func applyTransform(_ section: String, _ entry: ConfigEntry) throws(ConfigError) {
        let versions = section.dropFirst("migration ".count).components(separatedBy: " -> ")
        guard versions.count == 2, versions.allSatisfy({ !$0.trimmingCharacters(in: " ").isEmpty }) else {
            throw ConfigError(entry, "[\(section)]: a migration section is written [migration FROM -> TO]")
        }
        let parts = entry.key.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ SQLIdentifier.isPlain(String($0)) }) else {
            throw ConfigError(entry, "[\(section)]: keys are Entity.property, not \(String(reflecting: entry.key))")
        }
        guard let value = StepTransform.expression(parsing: entry.value) else {
            throw ConfigError(
                entry,
                "[\(section)]: \(entry.key) = \(entry.value): a value is $source.key.path, a number, true, false, "
                    + "null or a \"string\""
            )
        }
        let from = versions[0].trimmingCharacters(in: " ")
        let to = versions[1].trimmingCharacters(in: " ")
        let assignment = StepTransform.Assignment(
            entity: String(parts[0]),
            property: String(parts[1]),
            value: value,
            location: entry.location
        )
        if let index = transforms.firstIndex(where: { $0.from == from && $0.to == to }) {
            transforms[index].assignments.append(assignment)
        } else {
            transforms.append(StepTransform(from: from, to: to, assignments: [assignment]))
        }
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
        try publish.validate()
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
    /// With `allowMissing` (`--check-config`), a directory that does not exist yet is no error but a
    /// returned note: tmpfiles.d or the socket unit makes it before coexistd starts.
    @discardableResult
    public func validateSocketDirectory(allowMissing: Bool = false) throws(ConfigError) -> String? {
        let directory = socket.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        let path = directory.isEmpty ? "." : directory
        if allowMissing && access(path, F_OK) != 0 && errno == ENOENT {
            return "socket directory \(path) does not exist yet: systemd-tmpfiles --create or the socket unit makes it"
        }
        guard access(path, W_OK | X_OK) == 0 else {
            throw ConfigError(
                location: locations["socket"] ?? "defaults: socket",
                message: "socket directory \(path) is not writable (\(String(cString: strerror(errno))))"
            )
        }
        return nil
    }

    /// Takes every reloadable key's value from `fresh` (what a SIGHUP applies).
    public mutating func adoptReloadable(from fresh: DaemonConfiguration) {
        for key in Self.table where key.reloadable { key.adopt(&self, fresh) }
    }

    /// The keys whose values differ from `other`'s, split into those a reload applies and those that need
    /// a restart.
    public func changes(from other: DaemonConfiguration) -> (reloadable: [String], restart: [String]) {
        var changed = Self.table.filter { $0.differs(self, other) }.map(\.name)
        if overrides != other.overrides { changed.append("[entity …]") }
        if publish != other.publish { changed.append("[publish]") }
        return (
            changed.filter { Self.reloadableKeys.contains($0) }, changed.filter { !Self.reloadableKeys.contains($0) }
        )
    }
}

/// What coexistd does with a store at an older version of the configured `.xcdatamodeld`.
public enum AutoMigrate: String, Sendable, CaseIterable {
    /// Refuse to start (exit 78), naming the `coexistctl migrate` command.
    case off
    /// Migrate it at start, logging each step, when every step is lightweight (inferred, no mapping model);
    /// refuse otherwise.
    case lightweight
}
