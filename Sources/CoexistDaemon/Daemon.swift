import CoexistBridge
public import CoexistConfiguration
import CoexistEvents
import CoexistHistory
import CoexistLegacyStore
import CoexistMigration
import CoexistModel
import CoexistPublish
import CoexistReporting
public import CoexistRuntime
import CoexistSQLite
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// The bridge daemon: opens the shared file, runs the initial sync when needed, binds (or inherits) the
/// socket, tells systemd it is ready, then mirrors every commit as it happens and serves change events.
///
/// Two threads, each with its own SQLite connection. The daemon's thread owns the ``CommitWatcher`` (the one
/// watch of the file), the socket and its clients, the signals, the watchdog and `STATUS=`: it waits in
/// `poll(2)` on the watcher, a `signalfd` (SIGTERM, SIGINT, SIGHUP), the listening socket and its clients,
/// and the worker's wake-up (a pass committed), with a timeout for the fallback check, the watchdog and
/// `STATUS=` updates. A commit the watcher sees is published and handed to the bridge thread
/// (``BridgeWorker``), which mirrors it on its own connection. Mirroring therefore never delays an event.
/// Idle, both sleep in `poll`.
public final class Daemon {
    var configuration: DaemonConfiguration
    let configFile: String?
    let commandLine: [ConfigEntry]
    let logger: Logger
    let notifier = ServiceNotifier()
    var engine: SyncEngine?
    /// The file served, watched by the bridge thread; kept for the process's life.
    var identity: DatabaseFileIdentity?
    var connection: Connection?
    var server: EventServer?
    var worker: BridgeWorker?
    /// Publishes every change to NATS JetStream (`[publish]`), when configured.
    var publisher: PublishService?
    /// Answers `status` from the socket's binding until the event service takes it over.
    var responder: StartupResponder?
    /// A SIGHUP arrived while the daemon started: it reloads once it serves.
    var reloadPending = false
    /// The socket systemd passed, if any (`LISTEN_FDS` is read once: reading it removes it).
    lazy var inheritedSocket: Int32? = notifier.listenDescriptors().first
    /// A commit was seen that is not published yet (the last publish failed).
    var unpublished = true
    var statusAt = Monotonic.now()
    var rate = 0.0
    var publishWarning = RepeatingWarning()
    /// Set when publishing found the file damaged: the daemon stops.
    var publishFailure: (any Error)?

    /// A daemon for `configuration`, reloadable from `configFile` and `commandLine` on SIGHUP.
    public init(configuration: DaemonConfiguration, configFile: String?, commandLine: [ConfigEntry], logger: Logger) {
        self.configuration = configuration
        self.configFile = configFile
        self.commandLine = commandLine
        self.logger = logger
    }

    /// Serves until SIGTERM or SIGINT; returns the exit code.
    public func run(signals: SignalReceiver) -> ExitCode {
        TimerSlack.set(nanoseconds: 1_000)
        // Every client holds a descriptor; the database, WAL, watchers and wake-ups need a few dozen more.
        if let limit = OpenFilesLimit.raise(), limit < UInt64(configuration.limits.maxClients + 64) {
            logger.warning(
                "the open-files limit (\(limit)) is below max-clients + 64: clients beyond it wait until others "
                    + "leave (raise LimitNOFILE)"
            )
        }
        var watcher: CommitWatcher?
        var stream: JetStream?
        do {
            try checkInheritedSocket()
            // Servers that cannot be reached or a stream that does not fit stop coexistd before it starts.
            if configuration.publish.isEnabled { stream = try PublishService.connect(configuration.publish) }
            try open(signals: signals) { [self] in
                try StartupResponder(listener: try bindSocket(), limits: configuration.limits, logger: logger)
            }
            // The bridge thread first: the socket is served (and clients subscribe) once it is running.
            let worker = try startWorker()
            self.worker = worker
            if let stream {
                let publisher = try PublishService(
                    configuration: configuration,
                    stream: stream,
                    consumers: worker.consumers,
                    logger: logger
                )
                self.publisher = publisher
                try publisher.start()
            }
            // From here on the bridge thread is the only writer: the event service reads through its own
            // read-only connection, and its consumers' positions go to the bridge thread.
            let engine = try Self.openEventEngine(configuration)
            self.connection = engine.connection
            self.engine = engine
            warnAboutFormerPublishers()
            // Watching before the event service starts: a client it serves is served every commit.
            do {
                watcher = try CommitWatcher(database: configuration.database, connection: engine.connection)
            } catch {
                logger.error("\(error)")
                publisher?.stop()
                worker.stop()
                responder?.abandon()
                return .unavailable
            }
            let (listener, held) = try responder?.finish() ?? (bindSocket(), [])
            responder = nil
            let server: EventServer
            do {
                server = try EventServer(
                    listener: listener,
                    engine: engine,
                    limits: configuration.limits,
                    logger: logger,
                    consumers: worker.consumers
                )
            } catch {
                for connection in held { close(connection.descriptor) }
                throw error
            }
            server.statusFields = { [unowned self] in
                refreshRate(Monotonic.now())
                let shared = self.worker?.shared.withLock { $0 } ?? BridgeWorker.Shared()
                return [
                    ("mirrored", .integer(Int64(shared.mirrored))),
                    ("conflicts", .integer(Int64(shared.conflicts))),
                    ("parked", .integer(Int64((try? engine.parkedCount()) ?? shared.parked))),
                    ("oldestParked", ((try? engine.oldestParked()) ?? nil).map { .string($0) } ?? .null),
                    ("rate", .number(rate)),
                    ("error", shared.lastError.map { .string($0) } ?? .null),
                ] + publishStatusFields()
            }
            server.migrate = { [unowned self] target in
                guard let worker = self.worker else {
                    throw BridgeError.unmirrorable("the bridge thread is not running")
                }
                // The publisher reads the history the migration commits with the new model only.
                self.publisher?.hold()
                defer { self.publisher?.reopen() }
                // The event thread waits for the bridge thread; systemd's watchdog is told it is alive.
                let report = try worker.migrate(to: target) { [notifier] in notifier.watchdog() }
                if !report.steps.isEmpty {
                    // The event service reads with the new version's model from now on. The file is
                    // migrated whatever happens here: a service that cannot follow it stops (and restarts).
                    do {
                        let engine = try Self.openEventEngine(self.configuration)
                        try self.server?.adopt(engine: engine)
                        self.engine = engine
                    } catch {
                        self.publishFailure = error
                    }
                }
                return (
                    report.from,
                    report.to,
                    [
                        ("steps", .integer(Int64(report.steps.count))),
                        ("backup", report.backup.map { .string($0) } ?? .null),
                    ]
                )
            }
            server.feed = publisher?.feed
            server.describeFailure = { error in
                let report = ErrorReport(error)
                return (report.exitCode.rawValue, report.message)
            }
            self.server = server
            // Connections made while the daemon started: their held requests are answered now.
            for connection in held {
                server.adopt(
                    descriptor: connection.descriptor,
                    lines: connection.lines,
                    partial: connection.partial,
                    now: Monotonic.now()
                )
            }
        } catch let stopped as Stopped {
            responder?.abandon()
            responder = nil
            let percent = stopped.progress.map { Int($0.fraction * 100) } ?? 0
            notifier.stopping(status: "stopped during the initial sync (\(percent)%)")
            logger.notice(
                "stopped during the initial sync at \(percent)%: the next start resumes it",
                fields: [.event: "initial-sync"]
            )
            return .success
        } catch {
            responder?.abandon()
            responder = nil
            publisher?.stop()
            self.worker?.stop()
            let report = ErrorReport(error)
            logger.error(report.message)
            return report.exitCode
        }
        guard let worker else { return .software }
        defer {
            publisher?.stop()
            worker.stop()
        }
        guard let watcher else { return .software }
        let watchdog = notifier.watchdogMicroseconds().map { $0 * 1_000 / 2 }
        var nextWatchdog = Monotonic.now()
        var nextCheck = Monotonic.now()
        notifier.ready(status: statusLine())
        if reloadPending {
            reloadPending = false
            reload()
        }
        let cursor = (try? engine?.cursor() ?? 0) ?? 0
        logger.notice(
            "coexistd ready on \(configuration.database), cursor \(cursor)",
            fields: [.database: configuration.database, .token: "\(cursor)"]
        )
        while true {
            let now = Monotonic.now()
            if let watchdog, now >= nextWatchdog {
                // Only while the bridge thread goes round its loop (it does at least every poll interval).
                let heartbeat = worker.shared.withLock { $0.heartbeat }
                if now < heartbeat + 2 * watchdog + configuration.pollInterval { notifier.watchdog() }
                nextWatchdog = now + watchdog
            }
            // STATUS= once a second, only under systemd: an idle daemon otherwise wakes every few seconds.
            if notifier.isEnabled && now >= statusAt + 1_000_000_000 { updateStatus(now) }
            // First: bringing the event service's registrations up to date may set a retry time of its own.
            let serverDescriptors = server?.descriptors(now: now) ?? []
            var deadline = nextCheck
            if notifier.isEnabled { deadline = min(deadline, statusAt + 1_000_000_000) }
            if watchdog != nil { deadline = min(deadline, nextWatchdog) }
            if let server { deadline = min(deadline, server.nextDeadline(now: now)) }
            // Rounded up: waking before the deadline would spin through zero-timeout polls until it passes.
            let timeout = Int32(clamping: ((deadline > now ? deadline - now : 0) + 999_999) / 1_000_000)
            var descriptors = [
                pollfd(fd: watcher.descriptor, events: Int16(POLLIN), revents: 0),
                pollfd(fd: worker.events.descriptor, events: Int16(POLLIN), revents: 0),
                pollfd(fd: signals.descriptor, events: Int16(POLLIN), revents: 0),
            ]
            descriptors += serverDescriptors
            let ready = poll(&descriptors, nfds_t(descriptors.count), timeout)
            if ready < 0 && errno != EINTR {
                logger.error("poll failed: \(String(cString: strerror(errno)))")
                return .software
            }
            var due = Monotonic.now() >= nextCheck
            var fileEvent = false
            for descriptor in descriptors where descriptor.revents != 0 {
                switch descriptor.fd {
                case watcher.descriptor:
                    if watcher.drain() { (due, fileEvent) = (true, true) }
                case worker.events.descriptor:
                    worker.events.drain()
                    due = true
                    if let failure = worker.shared.withLock({ $0.failure }) {
                        let report = ErrorReport(failure)
                        logger.error(report.message)
                        notifier.status("failed: \(report.message)")
                        shutdown()
                        return report.exitCode
                    }
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
            if due {
                let published = publishCommits(watcher: watcher, worker: worker, fileEvent: fileEvent)
                if let failure = publishFailure {
                    let report = ErrorReport(failure)
                    logger.error(report.message)
                    notifier.status("failed: \(report.message)")
                    shutdown()
                    return report.exitCode
                }
                // The bridge thread watches the file and polls; this thread's own check is a slow backstop,
                // at the poll interval only to retry a failed publish.
                nextCheck =
                    Monotonic.now()
                    + (published ? max(configuration.pollInterval, 5_000_000_000) : configuration.pollInterval)
            }
            server?.tick(now: Monotonic.now())
        }
    }

    /// The bridge thread, on its own connection and engine.
    func startWorker() throws -> BridgeWorker {
        let database = configuration.database
        let modelPath = configuration.model
        let overrides = configuration.overrides
        let bridge = configuration.bridge
        guard let identity else { throw BridgeError.unmirrorable("the database was not opened") }
        let migrate = Self.migrateServed(configuration, logger: logger)
        let worker = try BridgeWorker(
            database: database,
            identity: identity,
            options: configuration.openOptions,
            settings: settings,
            logger: logger,
            migrateStore: migrate
        ) { connection in
            // Read on every open: after a migration the engine opens with the model file's current version.
            let model = try modelPath.map { try XCDataModelReader.read(path: $0) }
            return try SyncEngine(connection: connection, model: model, overrides: overrides, configuration: bridge)
        }
        try worker.start()
        return worker
    }

    /// What the bridge thread may change at run time.
    var settings: BridgeWorker.Settings {
        BridgeWorker.Settings(
            bridge: configuration.bridge,
            pollInterval: configuration.pollInterval,
            parkedRetryInterval: configuration.parkedRetryInterval,
            historyRetention: configuration.historyRetention,
            consumerExpiry: configuration.consumerExpiry
        )
    }

    /// Refuses a socket passed by systemd that is not the configured one: coexistctl --config finds the
    /// daemon by the configured socket, and a template instance whose configuration names another one
    /// would send its status and waits to another daemon. Checked before the file is touched.
    func checkInheritedSocket() throws {
        guard let inherited = inheritedSocket, !UnixListener.listens(inherited, on: configuration.socket)
        else { return }
        throw ConfigError(
            location: configuration.locations["socket"] ?? "defaults: socket",
            message: "systemd passes a socket that is not \(configuration.socket): set socket to the socket "
                + "unit's ListenStream= (/run/coexist/NAME.sock for coexistd@NAME)"
        )
    }

    func bindSocket() throws -> UnixListener {
        if let inherited = inheritedSocket { return try UnixListener(inherited: inherited) }
        try configuration.validateSocketDirectory()
        return try UnixListener(
            path: configuration.socket,
            mode: configuration.socketMode,
            group: configuration.socketGroup
        )
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
