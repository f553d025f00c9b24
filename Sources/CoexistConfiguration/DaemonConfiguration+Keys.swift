import CoexistRuntime

/// One top-level configuration key: its name, whether a SIGHUP applies it, a line of documentation, how
/// its value is parsed into the configuration, and how two configurations are compared and reloaded on it.
/// ``DaemonConfiguration/table`` holds them all: adding a key touches that table (and the documented file
/// `config/coexistd.conf`, which a test holds to it).
public struct ConfigKey: Sendable {
    public let name: String
    public let reloadable: Bool
    public let doc: String
    let apply: @Sendable (inout DaemonConfiguration, ConfigEntry) throws(ConfigError) -> Void
    let differs: @Sendable (DaemonConfiguration, DaemonConfiguration) -> Bool
    /// Copies the key's value from the second configuration into the first.
    let adopt: @Sendable (inout DaemonConfiguration, DaemonConfiguration) -> Void

    init<Value: Equatable & Sendable>(
        _ name: String,
        reloadable: Bool = false,
        _ path: any WritableKeyPath<DaemonConfiguration, Value> & Sendable,
        _ doc: String,
        parse: @escaping @Sendable (ConfigEntry) throws(ConfigError) -> Value
    ) {
        self.name = name
        self.reloadable = reloadable
        self.doc = doc
        apply = { configuration, entry throws(ConfigError) in configuration[keyPath: path] = try parse(entry) }
        differs = { $0[keyPath: path] != $1[keyPath: path] }
        adopt = { $0[keyPath: path] = $1[keyPath: path] }
    }
}

extension DaemonConfiguration {
    /// Every top-level key, in the order of `config/coexistd.conf`.
    public static let table: [ConfigKey] = [
        ConfigKey("database", \.database, "the shared SQLite file (a Core Data store)") { entry throws(ConfigError) in
            try entry.nonEmpty()
        },
        ConfigKey("model", \.model, "the app's .xcdatamodeld; empty: the store's own model") {
            entry throws(ConfigError) in entry.value.isEmpty ? nil : entry.value
        },
        ConfigKey("auto-migrate", \.autoMigrate, "off, or lightweight: migrate an older store at start") {
            entry throws(ConfigError) in
            AutoMigrate(rawValue: try entry.choice(AutoMigrate.allCases.map(\.rawValue))) ?? .off
        },
        ConfigKey("socket", \.socket, "the Unix socket subscribers connect to") { entry throws(ConfigError) in
            try entry.nonEmpty()
        },
        ConfigKey("socket-mode", \.socketMode, "the socket file's mode (octal)") { entry throws(ConfigError) in
            try entry.fileMode()
        },
        ConfigKey("socket-group", \.socketGroup, "the socket file's numeric group; empty: the daemon's") {
            entry throws(ConfigError) in entry.value.isEmpty ? nil : try entry.integerList().first
        },
        ConfigKey(
            "conflict-policy",
            reloadable: true,
            \.bridge.conflictPolicy,
            "later-wins, legacy-wins or new-wins"
        ) { entry throws(ConfigError) in
            ConflictPolicy(rawValue: try entry.choice(ConflictPolicy.allCases.map(\.rawValue))) ?? .laterWins
        },
        ConfigKey("batch-size", reloadable: true, \.bridge.batchSize, "source transactions per snapshot, at most") {
            entry throws(ConfigError) in try entry.integer(in: 1...100_000)
        },
        ConfigKey("initial-sync-chunk", reloadable: true, \.bridge.initialSyncChunk, "objects per initial-sync write") {
            entry throws(ConfigError) in try entry.integer(in: 1...1_000_000)
        },
        ConfigKey("history-retention", reloadable: true, \.historyRetention, "prune mirrored history older; 0: keep") {
            entry throws(ConfigError) in try entry.duration()
        },
        // Bounded above: deadlines are now plus the interval (a longer one overflowed).
        ConfigKey("poll-interval", reloadable: true, \.pollInterval, "fallback check without inotify (1ms to 24h)") {
            entry throws(ConfigError) in
            try entry.duration(in: 1_000_000...86_400_000_000_000, "from 1ms to 24h")
        },
        ConfigKey(
            "parked-retry-interval",
            reloadable: true,
            \.parkedRetryInterval,
            "how often parked transactions are tried again (1s to 1h)"
        ) { entry throws(ConfigError) in
            try entry.duration(in: 1_000_000_000...3_600_000_000_000, "from 1s to 1h")
        },
        ConfigKey("busy-timeout", \.busyTimeoutMilliseconds, "how long a blocked statement retries") {
            entry throws(ConfigError) in Int(try entry.duration() / 1_000_000)
        },
        ConfigKey("cache-size", \.cacheKilobytes, "each connection's page cache, KiB") { entry throws(ConfigError) in
            try entry.integer(in: 256...4_194_304)
        },
        ConfigKey("log-level", reloadable: true, \.logLevel, "error, warning, notice, info or debug") {
            entry throws(ConfigError) in
            guard let level = LogLevel(name: entry.value) else {
                throw ConfigError(
                    entry,
                    "log-level must be one of error, warning, notice, info, debug, not \"\(entry.value)\""
                )
            }
            return level
        },
        ConfigKey("author", \.bridge.author, "the author of the bridge's own transactions") {
            entry throws(ConfigError) in try entry.nonEmpty()
        },
        ConfigKey("bundle-id", \.bridge.bundleID, "the bundle identifier of its transactions; empty: the author") {
            entry throws(ConfigError) in entry.value.isEmpty ? nil : entry.value
        },
        ConfigKey(
            "allow-uids",
            reloadable: true,
            \.limits.allowUIDs,
            "peer uids served (SO_PEERCRED; empty: the file mode decides)"
        ) {
            entry throws(ConfigError) in try entry.integerList()
        },
        ConfigKey("allow-gids", reloadable: true, \.limits.allowGIDs, "peer gids served") { entry throws(ConfigError) in
            try entry.integerList()
        },
        ConfigKey("max-clients", reloadable: true, \.limits.maxClients, "connections at once") {
            entry throws(ConfigError) in try entry.integer(in: 1...100_000)
        },
        ConfigKey("max-line-length", reloadable: true, \.limits.maxLineLength, "bytes of one request line") {
            entry throws(ConfigError) in try entry.integer(in: 256...16_777_216)
        },
        ConfigKey("request-timeout", reloadable: true, \.limits.requestTimeout, "a started request line's budget") {
            entry throws(ConfigError) in
            try entry.duration(in: 100_000_000...3_600_000_000_000, "from 100ms to 1h")
        },
        ConfigKey("snapshot-max-duration", reloadable: true, \.limits.snapshotMaxDuration, "a snapshot's longest read")
        {
            entry throws(ConfigError) in
            try entry.duration(in: 1_000_000_000...86_400_000_000_000, "from 1s to 24h")
        },
        ConfigKey("queue-limit", reloadable: true, \.limits.queueLimit, "events queued per subscriber") {
            entry throws(ConfigError) in try entry.integer(in: 16...10_000_000)
        },
        ConfigKey("queue-bytes", reloadable: true, \.limits.queueBytes, "bytes queued per subscriber") {
            entry throws(ConfigError) in try entry.integer(in: 65_536...(1 << 40))
        },
        ConfigKey("total-queue-bytes", reloadable: true, \.limits.totalQueueBytes, "bytes queued in all") {
            entry throws(ConfigError) in try entry.integer(in: 1 << 20...(1 << 50))
        },
        ConfigKey("max-pending-requests", reloadable: true, \.limits.maxPendingRequests, "waits per connection") {
            entry throws(ConfigError) in try entry.integer(in: 1...1_000_000)
        },
        ConfigKey("max-consumers", reloadable: true, \.limits.maxConsumers, "durable consumers; 0: none") {
            entry throws(ConfigError) in try entry.integer(in: 0...1_000_000)
        },
        ConfigKey("heartbeat-interval", reloadable: true, \.limits.heartbeatInterval, "idle subscribers' heartbeat") {
            entry throws(ConfigError) in
            try entry.duration(in: 100_000_000...86_400_000_000_000, "from 100ms to 24h")
        },
        ConfigKey("consumer-expiry", reloadable: true, \.consumerExpiry, "a silent consumer stops holding history") {
            entry throws(ConfigError) in try entry.duration()
        },
    ]

    /// The table by name.
    static let keysByName: [String: ConfigKey] = Dictionary(
        table.map { ($0.name, $0) },
        uniquingKeysWith: { a, _ in a }
    )
}

extension ConfigEntry {
    /// A duration within `range`, else an error saying the key must be `bounds`.
    fileprivate func duration(in range: ClosedRange<UInt64>, _ bounds: String) throws(ConfigError) -> UInt64 {
        let value = try duration()
        guard range.contains(value) else { throw ConfigError(self, "\(key) must be \(bounds)") }
        return value
    }
}
