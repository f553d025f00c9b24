public import CoexistBridge
import CoexistEvents
import CoexistHistory
import CoexistModel
public import CoexistRuntime
import CoexistSQLite
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// The bridge daemon: opens the shared file, runs the initial sync when needed, binds (or inherits) the
/// socket, tells systemd it is ready, then mirrors every commit as it happens.
///
/// One thread owns everything (the SQLite connection, the socket, the clients) and waits in `poll(2)` on:
/// an inotify watch of the database's directory (a commit by another process writes the `-wal`), a
/// `signalfd` (SIGTERM, SIGINT, SIGHUP), the listening socket and its clients, with a timeout for the
/// fallback periodic check, the watchdog and `STATUS=` updates. Idle, it sleeps in `poll`.
public final class Daemon {
    var configuration: DaemonConfiguration
    let configFile: String?
    let commandLine: [ConfigEntry]
    let logger: Logger
    let notifier = ServiceNotifier()
    var engine: SyncEngine?
    var connection: Connection?
    var server: EventServer?
    var statistics = Statistics()
    var lastDataVersion: Int64 = -1
    var backoff: UInt64 = 0
    var lastError: String?

    struct Statistics {
        var mirrored = 0
        var conflicts = 0
        var parked = 0
        var handledSinceStatus = 0
        var statusAt = Monotonic.now()
        var rate = 0.0
        /// Something changed since the last STATUS= (a commit seen, an error): the next one is sent.
        var changed = true
    }

    /// A daemon for `configuration`, reloadable from `configFile` and `commandLine` on SIGHUP.
    public init(configuration: DaemonConfiguration, configFile: String?, commandLine: [ConfigEntry], logger: Logger) {
        self.configuration = configuration
        self.configFile = configFile
        self.commandLine = commandLine
        self.logger = logger
    }

    /// Opens the database and the bridge, and runs the initial sync when the bridge never ran.
    public func open() throws {
        let connection = try Connection(
            path: configuration.database,
            options: OpenOptions(busyTimeoutMilliseconds: configuration.busyTimeoutMilliseconds)
        )
        let model = try configuration.model.map { try XCDataModelReader.read(path: $0) }
        let engine = try SyncEngine(
            connection: connection,
            model: model,
            overrides: configuration.overrides,
            configuration: configuration.bridge
        )
        engine.report = { [logger] message in logger.warning(message) }
        self.connection = connection
        self.engine = engine
        try engine.initialSyncIfNeeded { [notifier, logger] progress in
            let text =
                "initial sync \(progress.direction) (\(progress.phase)): \(progress.entity) \(progress.done) of \(progress.total)"
            notifier.status(text)
            logger.debug(text)
        }
    }

    /// Mirrors everything pending and returns (`coexistd --once`).
    public func runOnce() throws -> SyncEngine.PassResult {
        try open()
        guard let engine else { throw BridgeError.unmirrorable("the bridge did not open") }
        let result = try engine.catchUp()
        try pruneHistory()
        return result
    }

    /// Serves until SIGTERM or SIGINT; returns the exit code.
    public func run(signals: SignalReceiver) -> ExitCode {
        do {
            try open()
            guard let engine else { return .software }
            let server = try EventServer(
                listener: try bindSocket(),
                engine: engine,
                limits: configuration.limits,
                logger: logger
            )
            server.statusFields = { [unowned self] in
                [
                    ("mirrored", .integer(Int64(statistics.mirrored))),
                    ("conflicts", .integer(Int64(statistics.conflicts))),
                    ("parked", .integer(Int64(statistics.parked))), ("rate", .number(statistics.rate)),
                    ("error", lastError.map { .string($0) } ?? .null),
                ]
            }
            self.server = server
        } catch let error as ConfigError {
            logger.error(error.description)
            return .configuration
        } catch let error as SystemError {
            logger.error("\(error)")
            return .configuration
        } catch {
            logger.error("\(error)")
            return error is BridgeError ? .configuration : .dataError
        }
        let directory = Self.directory(of: configuration.database)
        let base = configuration.database.split(separator: "/").last.map(String.init) ?? configuration.database
        let watcher: DirectoryWatcher
        do {
            watcher = try DirectoryWatcher(directory: directory, names: [base, base + "-wal"])
        } catch {
            logger.error("\(error)")
            return .unavailable
        }
        let watchdog = notifier.watchdogMicroseconds().map { $0 * 1_000 / 2 }
        var nextWatchdog = Monotonic.now()
        var nextCheck = Monotonic.now()
        var nextPrune = Monotonic.now()
        notifier.ready(status: statusLine())
        logger.notice("coexistd ready on \(configuration.database), cursor \((try? engine?.cursor() ?? 0) ?? 0)")
        var busy = true
        while true {
            let now = Monotonic.now()
            if let watchdog, now >= nextWatchdog {
                notifier.watchdog()
                nextWatchdog = now + watchdog
            }
            if now >= statistics.statusAt + 1_000_000_000 { updateStatus(now) }
            if now >= nextPrune {
                try? pruneHistory()
                nextPrune = now + 60_000_000_000
            }
            var deadline = min(nextCheck, statistics.statusAt + 1_000_000_000)
            if watchdog != nil { deadline = min(deadline, nextWatchdog) }
            if let server { deadline = min(deadline, server.nextDeadline(now: now)) }
            // Rounded up: waking before the deadline would spin through zero-timeout polls until it passes.
            let timeout = busy ? 0 : Int32(clamping: ((deadline > now ? deadline - now : 0) + 999_999) / 1_000_000)
            var descriptors = [pollfd(fd: watcher.descriptor, events: Int16(POLLIN), revents: 0)]
            descriptors.append(pollfd(fd: signals.descriptor, events: Int16(POLLIN), revents: 0))
            descriptors += server?.descriptors() ?? []
            let ready = poll(&descriptors, nfds_t(descriptors.count), timeout)
            if ready < 0 && errno != EINTR {
                logger.error("poll failed: \(String(cString: strerror(errno)))")
                return .software
            }
            var wake = busy || Monotonic.now() >= nextCheck
            var fileEvent = false
            for descriptor in descriptors where descriptor.revents != 0 {
                switch descriptor.fd {
                case watcher.descriptor:
                    if watcher.drain() { (wake, fileEvent) = (true, true) }
                case signals.descriptor:
                    for signal in signals.drain() {
                        switch signal {
                        case .terminate, .interrupt:
                            shutdown()
                            return .success
                        case .hangup:
                            reload()
                        }
                    }
                default:
                    server?.handle(descriptor, now: Monotonic.now())
                }
            }
            if wake {
                // data_version moves only for other connections' commits: when it has not moved, nothing is
                // pending, failing or unpublished, the timer's check costs one pragma.
                let version = visibleDataVersion(waitForCommit: fileEvent)
                if busy || backoff > 0 || version != lastDataVersion {
                    publish()  // commits by the apps reach subscribers before the bridge mirrors them
                    busy = mirrorIfChanged(version: version)
                    publish()
                    statistics.changed = true
                }
                nextCheck = Monotonic.now() + (backoff > 0 ? backoff : configuration.pollInterval)
            }
            server?.tick(now: Monotonic.now())
        }
    }

    /// `PRAGMA data_version`; after a file event, read again briefly while it has not moved (inotify fires on
    /// the first write to the WAL, a little before the commit becomes visible). Nil when it cannot be read.
    func visibleDataVersion(waitForCommit: Bool) -> Int64? {
        guard let connection else { return nil }
        do {
            var version = try connection.dataVersion()
            var retries = 0
            while waitForCommit && version == lastDataVersion && retries < 4 {
                usleep(50)
                version = try connection.dataVersion()
                retries += 1
            }
            return version
        } catch {
            return nil
        }
    }

    /// Runs one bridge pass when the data version moved (or work is pending); returns whether more is
    /// pending.
    func mirrorIfChanged(version: Int64?) -> Bool {
        guard let engine, let connection else { return false }
        do {
            let version = try version ?? connection.dataVersion()
            let cursor = try engine.cursor() ?? 0
            let last = try engine.lastToken()
            if version == lastDataVersion && backoff == 0 && cursor >= last { return false }
            let result = try engine.pass()
            lastDataVersion = version
            statistics.mirrored += result.mirrored
            statistics.conflicts += result.conflicts
            statistics.parked += result.parked
            statistics.handledSinceStatus += result.handled
            if backoff > 0 { logger.notice("mirroring resumed") }
            backoff = 0
            lastError = nil
            if result.handled > 0 {
                logger.debug(
                    "mirrored \(result.mirrored) of \(result.handled) transactions",
                    fields: ["COEXIST_TOKEN": "\(result.cursor)"]
                )
            }
            return result.handled > 0
        } catch {
            backoff = min(max(backoff * 2, 50_000_000), 5_000_000_000)
            let text = "\(error)"
            if text != lastError { logger.warning("mirroring failed, retrying in \(backoff / 1_000_000) ms: \(text)") }
            lastError = text
            notifier.status("retrying: \(text)")
            return false
        }
    }

    func bindSocket() throws -> UnixListener {
        if let inherited = notifier.listenDescriptors().first { return try UnixListener(inherited: inherited) }
        try configuration.validateSocketDirectory()
        return try UnixListener(
            path: configuration.socket,
            mode: configuration.socketMode,
            group: configuration.socketGroup
        )
    }

    func publish() {
        do {
            try server?.publish(now: Monotonic.now())
        } catch {
            logger.warning("publishing events failed: \(error)")
        }
    }

    func statusLine() -> String {
        let cursor = ((try? engine?.cursor()) ?? nil) ?? 0
        let last = (try? engine?.lastToken()) ?? 0
        let rate = (statistics.rate * 10).rounded() / 10
        return "cursor \(cursor), lag \(max(0, last - cursor)), \(rate) tx/s, \(statistics.mirrored) mirrored, "
            + "\(statistics.conflicts) conflicts, \(statistics.parked) parked"
            + (lastError.map { ", retrying: \($0)" } ?? "")
    }

    func updateStatus(_ now: UInt64) {
        let elapsed = Double(now - statistics.statusAt) / 1e9
        statistics.rate = elapsed > 0 ? Double(statistics.handledSinceStatus) / elapsed : 0
        statistics.handledSinceStatus = 0
        statistics.statusAt = now
        guard notifier.isEnabled, statistics.changed || statistics.rate > 0 else { return }
        statistics.changed = false
        notifier.status(statusLine())
    }

    /// Prunes history older than the retention that the bridge has mirrored and every durable consumer
    /// (heard from within the consumer expiry) has acknowledged.
    func pruneHistory() throws {
        guard configuration.historyRetention > 0, let connection, let cursor = try engine?.cursor() else { return }
        let now = TransactionWriter.now()
        let activeSince = configuration.consumerExpiry > 0 ? now - Double(configuration.consumerExpiry) / 1e9 : nil
        try ConsumerTable.create(connection)
        let consumers = try ConsumerTable.lowestNeeded(connection, activeSince: activeSince)
        for name in consumers.expired {
            logger.warning("durable consumer \(name) expired: it no longer holds history back")
        }
        let bound = min(cursor, consumers.token ?? cursor)
        let pruned = try HistoryPruner.prune(
            connection,
            upTo: bound,
            olderThan: now - Double(configuration.historyRetention) / 1e9
        )
        if pruned > 0 { logger.info("pruned \(pruned) history transactions older than the retention") }
    }

    /// SIGHUP: re-reads the configuration; applies what can change at run time, names what needs a restart.
    func reload() {
        notifier.reloading()
        do {
            let fresh = try DaemonConfiguration.load(file: configFile, commandLine: commandLine)
            let (reloadable, restart) = fresh.changes(from: configuration)
            configuration.bridge.conflictPolicy = fresh.bridge.conflictPolicy
            configuration.bridge.batchSize = fresh.bridge.batchSize
            configuration.bridge.initialSyncChunk = fresh.bridge.initialSyncChunk
            configuration.historyRetention = fresh.historyRetention
            configuration.pollInterval = fresh.pollInterval
            configuration.logLevel = fresh.logLevel
            configuration.limits = fresh.limits
            configuration.consumerExpiry = fresh.consumerExpiry
            server?.limits = fresh.limits
            logger.level = fresh.logLevel
            engine?.configuration = configuration.bridge
            if !reloadable.isEmpty { logger.notice("reloaded: \(reloadable.joined(separator: ", "))") }
            if !restart.isEmpty { logger.warning("these changes need a restart: \(restart.joined(separator: ", "))") }
            if reloadable.isEmpty && restart.isEmpty { logger.notice("reloaded: nothing changed") }
        } catch {
            logger.error("reload failed, keeping the running configuration: \(error)")
        }
        notifier.ready(status: statusLine())
    }

    func shutdown() {
        notifier.stopping(status: "stopping at cursor \(((try? engine?.cursor()) ?? nil) ?? 0)")
        server?.shutdown()
        server = nil
        logger.notice("coexistd stopped")
    }

    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let directory = String(path[..<slash])
        return directory.isEmpty ? "/" : directory
    }
}

/// CLOCK_MONOTONIC in nanoseconds.
enum Monotonic {
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
