public import CoexistBridge
public import CoexistConfiguration
import CoexistEvents
import CoexistHistory
import CoexistLegacyStore
import CoexistMigration
public import CoexistModel
public import CoexistRuntime
import CoexistSQLite
import CoexistStore

#if canImport(Glibc)
import Glibc
#endif

/// Opening the file: the checks that leave a refused file untouched, the one-daemon lock, the bridge, and
/// the initial sync (with the socket already answering `status`).
extension Daemon {
    /// Opens the database and the bridge, and runs the initial sync when the bridge never ran.
    ///
    /// The file is first checked through a read-only connection (an SQLite file, with Core Data's tables, a
    /// model that resolves, overrides that fit it): refusing a file leaves it untouched, never switched to
    /// WAL or grown from empty into a database.
    public func open() throws { try open { nil } }

    /// ``open()``, with `beforeSync` run once the file is this daemon's (its lock held), before the initial
    /// sync: `run` binds the socket there, so that `status` answers during it. With `signals`, SIGTERM or
    /// SIGINT during the sync stops it after the running chunk (``Stopped``; the next start resumes it).
    func open(signals: SignalReceiver? = nil, beforeSync: () throws -> StartupResponder?) throws {
        let model = try Self.check(configuration)
        try migrateIfConfigured()
        // Before any connection: the one descriptor of the file this process keeps (see its type).
        let identity = try DatabaseFileIdentity(path: configuration.database)
        // One daemon per file: a second one would mirror every commit twice.
        try identity.serveExclusively()
        self.identity = identity
        let connection = try Connection(
            path: configuration.database,
            options: configuration.openOptions
        )
        let engine = try SyncEngine(
            connection: connection,
            model: model,
            overrides: configuration.overrides,
            configuration: configuration.bridge
        )
        engine.reportNotices(to: logger)
        self.connection = connection
        self.engine = engine
        try ConsumerTable.create(connection)
        try ServingDaemon.record(
            connection,
            pid: getpid(),
            socket: configuration.socket,
            now: TransactionWriter.now()
        )
        let responder = try beforeSync()
        var report = InitialSyncReport(notifier: notifier, logger: logger)
        do {
            let lastToken = (try? engine.lastToken()) ?? 0
            if try engine.initialSyncIfNeeded(progress: { progress in
                responder?.update(progress, lastToken: lastToken)
                report.progressed(progress)
                if stopRequested(signals) { throw Stopped(progress: progress) }
            }) {
                report.finished()
            }
        } catch {
            report.finish()
            responder?.abandon()
            throw error
        }
        report.finish()
        self.responder = responder
    }

    /// Whether SIGTERM or SIGINT has arrived (read without waiting); a SIGHUP is remembered for once the
    /// daemon serves.
    func stopRequested(_ signals: SignalReceiver?) -> Bool {
        guard let signals else { return false }
        var stop = false
        for signal in signals.drain() {
            switch signal {
            case .terminate, .interrupt: stop = true
            case .hangup: reloadPending = true
            }
        }
        return stop
    }

    /// The event service's view of the bridge: on a read-only connection (SQLite refuses every write on it).
    public static func openEventEngine(_ configuration: DaemonConfiguration) throws -> SyncEngine {
        let model = try configuration.model.map { try XCDataModelReader.read(path: $0) }
        return try SyncEngine(
            connection: try Connection(path: configuration.database, options: configuration.eventOpenOptions),
            model: model,
            overrides: configuration.overrides,
            configuration: configuration.bridge,
            readOnly: true
        )
    }

    /// Checks, without writing anything, that `configuration`'s database is a Core Data store coexistd can
    /// serve: a readable SQLite file with Core Data's tables, writable by this process, a configured model
    /// that parses, and entity overrides that name the model's entities and properties. Returns the
    /// configured model (nil: the store's own).
    public static func check(_ configuration: DaemonConfiguration) throws -> Model? {
        let directory = directory(of: configuration.database)
        for path in [configuration.database, directory] where access(path, W_OK) != 0 {
            throw SystemError(
                call: "access",
                code: errno,
                subject: path,
                detail: "coexistd (uid \(getuid())) cannot write it: \(String(cString: strerror(errno)))"
            )
        }
        let probe = try LegacyStore(path: configuration.database, options: .readOnly)
        let model = try configuration.model.map { try XCDataModelReader.read(path: $0) }
        if let model, let modelPath = configuration.model, let storeModel = probe.model,
            !model.structuralDifferences(from: storeModel).isEmpty
        {
            let command =
                configuration.file.map { "coexistctl migrate --config \($0)" }
                ?? "coexistctl migrate \(configuration.database) --model \(modelPath)"
            if let gap = Migrator.versionGap(store: probe, modelPath: modelPath, command: command),
                !gap.older || configuration.autoMigrate == .off
            {
                throw BridgeError.modelMismatch(gap.message)
            }
        }
        if let resolved = model ?? probe.model { try configuration.validateOverrides(against: resolved) }
        return model
    }

    /// Mirrors everything pending and returns (`coexistd --once`).
    /// With `signals`, SIGTERM or SIGINT stops it after the running chunk or pass (each committed): nil then.
    public func runOnce(signals: SignalReceiver? = nil) throws -> SyncEngine.PassResult? {
        do {
            try open(signals: signals) { nil }
        } catch is Stopped {
            return nil
        }
        guard let engine else { throw BridgeError.unmirrorable("the bridge did not open") }
        // Checkpoints between passes, never inside a pass's commit (see BridgeWorker.requestCheckpoint).
        connection?.manageCheckpoints()
        let result: SyncEngine.PassResult
        do {
            result = try engine.catchUp { [connection, self] _ in
                if let connection, connection.walFrames >= BridgeWorker.walPages {
                    try connection.checkpoint()
                    _ = try connection.restartingCheckpoint(waitingAtMost: 5)
                }
                if stopRequested(signals) { throw Stopped(progress: nil) }
            }
        } catch is Stopped {
            try connection?.checkpoint()
            return nil
        }
        try connection?.checkpoint()
        if let connection {
            try BridgeWorker.pruneHistory(connection: connection, engine: engine, settings: settings, logger: logger)
        }
        return result
    }
}

extension Daemon {
    /// SIGTERM or SIGINT arrived during the initial sync (or `--once`'s catch-up): it stopped after a
    /// committed chunk (or pass).
    struct Stopped: Error {
        let progress: SyncEngine.InitialSyncProgress?
    }
}
