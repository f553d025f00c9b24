import CoexistBridge
import CoexistConfiguration
import CoexistEvents
import CoexistHistory
import CoexistMigration
import CoexistRuntime
import CoexistSQLite
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The bridge's thread: its own connection and ``SyncEngine``, so that mirroring never delays event
/// delivery on the daemon's thread (each side of the split has a core on a 2-core machine).
///
/// It waits in `poll(2)` on ``wake``: a commit seen by the daemon's ``CommitWatcher`` (``commitLanded()``), a
/// consumer position posted, a stop, a reload, a checkpoint done (``Checkpointer``); with a timeout for the fallback check and retention pruning.
/// When its connection's data version moved (another process committed: the bridge's own commits do not
/// move it), it runs a pass, and signals ``events`` after every pass that committed. Passes are bounded
/// (``SyncEngine/passChanges``), so a stop or a reload is seen within about 50 ms.
final class BridgeWorker: @unchecked Sendable {
    /// What the daemon's thread may change while the worker runs.
    struct Settings: Sendable {
        var bridge: BridgeConfiguration
        var pollInterval: UInt64
        var parkedRetryInterval: UInt64
        var historyRetention: UInt64
        var consumerExpiry: UInt64
    }

    /// Counters and state both threads read; guarded by ``shared``.
    struct Shared {
        var mirrored = 0
        var conflicts = 0
        var parked = 0
        var handledSinceStatus = 0
        var lastError: String?
        /// Something changed since the daemon's last `STATUS=`.
        var changed = true
        /// When the worker last went round its loop (for the watchdog).
        var heartbeat = Monotonic.now()
        /// Why the worker could not start or stopped (an error ``ErrorReport`` maps to the exit code); the
        /// daemon exits with it.
        var failure: (any Error)?
        var pendingSettings: Settings?
        /// A migration asked for (the version to reach; nil inside: the current one), and its outcome.
        var migration: String??
        var migrationResult: Result<Migrator.Report, any Error>?
        var stop = false
        /// The thread has opened its connection.
        var started = false
    }

    let shared = PthreadLocked(Shared())
    /// True while the worker is inside a pass (holding, or waiting for, the write lock).
    let inPass = Atomic<Bool>(false)
    /// Signalled by the worker: commits to publish, or a failure.
    let events: WakeSignal
    private let wake: WakeSignal
    /// Durable consumers' positions from the event service, written by this thread (the one writer).
    let consumers: ConsumerOutbox
    private var thread: WorkerThread?
    private let database: String
    /// The file the daemon opened, checked on every round of the loop.
    let identity: DatabaseFileIdentity
    private let options: OpenOptions
    private let openEngine: @Sendable (Connection) throws -> SyncEngine
    /// Migrates the file (on this thread, the one writer, between passes).
    private let migrateStore: @Sendable (String?) throws -> Migrator.Report
    let logger: Logger
    var settings: Settings

    init(
        database: String,
        identity: DatabaseFileIdentity,
        options: OpenOptions,
        settings: Settings,
        logger: Logger,
        migrateStore: @escaping @Sendable (String?) throws -> Migrator.Report = { _ in
            throw BridgeError.unmirrorable("this bridge does not migrate")
        },
        openEngine: @escaping @Sendable (Connection) throws -> SyncEngine
    ) throws {
        self.migrateStore = migrateStore
        self.database = database
        self.identity = identity
        self.options = options
        self.settings = settings
        self.logger = logger
        self.openEngine = openEngine
        let events = try WakeSignal()
        let wake = try WakeSignal()
        self.events = events
        self.wake = wake
        consumers = ConsumerOutbox(onPost: { wake.signal() })
    }

    /// Starts the thread, and returns once it has opened its connection (or throws why it could not): the
    /// daemon says it is ready only then, and the clients it then accepts cannot take the descriptors the
    /// thread needs.
    func start() throws {
        thread = try ServiceThread.start(
            name: "coexist-bridge",
            signal: events,
            state: { shared.withLock { ($0.started, $0.failure) } }
        ) { [self] in run() }
    }

    /// Asks the thread to stop after its current pass, and waits for it.
    func stop() {
        shared.withLock { $0.stop = true }
        wake.signal()
        thread?.join()
        thread = nil
    }

    /// Tells the thread that a commit landed (seen by the daemon's ``CommitWatcher``).
    func commitLanded() { wake.signal() }

    /// Asks the thread to migrate the file to `target` (nil: the model's current version) once its current
    /// pass is done, after mirroring everything pending; waits for it and returns the report. The thread
    /// then mirrors on, with the model read again. Throws why the migration failed (nothing changed then).
    func migrate(to target: String?, whileWaiting: () -> Void = {}) throws -> Migrator.Report {
        shared.withLock {
            $0.migrationResult = nil
            $0.migration = .some(target)
        }
        wake.signal()
        var waited = 0
        while true {
            let (result, failure) = shared.withLock { ($0.migrationResult, $0.failure) }
            if let result {
                shared.withLock { $0.migrationResult = nil }
                return try result.get()
            }
            if let failure { throw failure }
            usleep(5_000)
            waited += 1
            if waited % 200 == 0 { whileWaiting() }
        }
    }

    /// Hands new settings to the thread (applied before its next pass).
    func update(_ settings: Settings) {
        shared.withLock { $0.pendingSettings = settings }
        wake.signal()
    }

    private func run() {
        let connection: Connection
        var engine: SyncEngine
        var checkpointer: Checkpointer?
        defer { checkpointer?.stop() }
        do {
            connection = try Connection(
                path: database,
                options: options
            )
            connection.manageCheckpoints()
            engine = try openEngine(connection)
            checkpointer = try Checkpointer(database: database, options: options, finished: wake)
        } catch {
            // The file gone or replaced since the daemon opened it is the reason, not what SQLite made of it.
            do {
                try identity.check()
            } catch let changed {
                fail(changed)
                return
            }
            fail(error)
            return
        }
        engine.configuration = settings.bridge
        engine.reportNotices(to: logger)
        shared.withLock { $0.started = true }
        events.signal()
        var state = LoopState()
        state.checkpointer = checkpointer
        while true {
            let now = Monotonic.now()
            do {
                try identity.check()
                try checkHeader(engine, now, &state)
            } catch {
                fail(error)
                return
            }
            if now >= state.nextPrune {
                do {
                    // Positions posted so far are in the table first, and any posted since bound it too.
                    recordConsumers(connection, &state)
                    if state.failure != nil { return }
                    try Self.pruneHistory(
                        connection: connection,
                        engine: engine,
                        settings: settings,
                        logger: logger,
                        pending: consumers.lowestPendingToken
                    )
                } catch {
                    logger.warning("pruning history failed: \(error)")
                }
                state.nextPrune = now + 60_000_000_000
            }
            checkpointFinished(connection, &state)
            if state.failure != nil { return }
            let checkpointDue = max(state.lastPass + Self.quietBeforeCheckpoint, state.nextCheckpoint)
            if connection.walFrames > 0 && !state.busy && now >= checkpointDue {
                requestCheckpoint(connection, &state)
            }
            var deadline = min(min(state.nextCheck, state.nextPrune), state.nextHeaderCheck)
            if connection.walFrames > 0 && !state.checkpointInFlight {
                deadline = min(deadline, max(state.lastPass + Self.quietBeforeCheckpoint, state.nextCheckpoint))
            }
            // Rounded up: waking before the deadline would spin through zero-timeout polls until it passes.
            let timeout =
                state.busy ? 0 : Int32(clamping: ((deadline > now ? deadline - now : 0) + 999_999) / 1_000_000)
            var descriptor = pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, timeout)
            var due = state.busy || Monotonic.now() >= state.nextCheck
            if descriptor.revents != 0 {
                // A commit, a consumer's position, a stop, a reload or a checkpoint done: the data version says
                // whether to mirror.
                due = true
                wake.drain()
                let (stop, fresh, migration) = shared.withLock { shared in
                    defer {
                        shared.pendingSettings = nil
                        shared.migration = nil
                    }
                    return (shared.stop, shared.pendingSettings, shared.migration)
                }
                if stop {
                    recordConsumers(connection, &state)  // what was acknowledged before the stop is kept
                    return
                }
                if let fresh {
                    settings = fresh
                    engine.configuration = fresh.bridge
                }
                if let target = migration {
                    recordConsumers(connection, &state)
                    let result = Result { () throws -> Migrator.Report in
                        // Apps may commit between the catch-up and the migration's write lock: it refuses
                        // then (nothing changed), and the bridge catches up again.
                        var attempt = 0
                        while true {
                            _ = try engine.catchUp()
                            do {
                                return try migrateStore(target)
                            } catch MigrationError.bridgeNotCaughtUp where attempt < 4 {
                                attempt += 1
                            }
                        }
                    }
                    shared.withLock { $0.migrationResult = result }
                    // The engine again in any case: with the model read again (the file's version now). A
                    // bridge that cannot follow the migrated file stops the daemon (systemd restarts it).
                    do {
                        engine = try openEngine(connection)
                        engine.configuration = settings.bridge
                        engine.reportNotices(to: logger)
                    } catch {
                        fail(error)
                        return
                    }
                    state.busy = true
                }
            }
            shared.withLock { $0.heartbeat = Monotonic.now() }
            recordConsumers(connection, &state)
            if state.failure != nil { return }
            guard due else { continue }
            // The commit watcher has seen the commit visible: no need to wait for it here.
            let version = connection.visibleDataVersion(after: state.dataVersion, waitForCommit: false)
            let moved = version != state.dataVersion
            if moved {
                events.signal()  // the fallback check may be the first to see it: the event thread publishes
                shared.withLock { $0.changed = true }
            }
            if state.busy || state.backoff > 0 || moved {
                state.busy = mirror(engine, &state)
                if state.failure != nil { return }
                state.dataVersion = version
                state.lastPass = Monotonic.now()
                if connection.walFrames >= Self.walPages && state.lastPass >= state.nextCheckpoint {
                    let restart = connection.walFrames >= 2 * Self.walPages && state.lastPass >= state.nextRestart
                    requestCheckpoint(connection, &state, restart: restart)
                }
            }
            if !state.busy && state.backoff == 0 && Monotonic.now() >= state.nextParkedRetry {
                retryParked(engine, &state)
                if state.failure != nil { return }
            }
            let end = Monotonic.now()
            state.nextCheck = end + (state.backoff > 0 ? state.backoff : settings.pollInterval)
            // Not a mirror backoff's retry (it keeps its wait), nor a header check already due or retried.
            if state.backoff == 0, state.damagedSince == nil, state.nextHeaderCheck > end {
                (state.nextCheck, state.nextHeaderCheck) = Self.aligned(
                    check: state.nextCheck,
                    header: state.nextHeaderCheck
                )
            }
        }
    }

    /// The fallback data-version check's and the header check's next times, the later brought forward to
    /// the earlier when they are at most ``alignment`` apart: an idle bridge then wakes once a second for
    /// both, not twice, and neither runs later than it was due.
    static func aligned(check: UInt64, header: UInt64) -> (check: UInt64, header: UInt64) {
        if check <= header, header - check <= alignment { return (check, check) }
        if header < check, check - header <= alignment { return (header, header) }
        return (check, header)
    }

    struct LoopState {
        var busy = true
        var backoff: UInt64 = 0
        var dataVersion: Int64? = -1
        var nextCheck = Monotonic.now()
        var nextPrune = Monotonic.now()
        var lastPass = Monotonic.now()
        var lastError: String?
        /// The checkpoint thread (nil until the connection opened), and whether it runs one asked for.
        var checkpointer: Checkpointer?
        var checkpointInFlight = false
        /// Whether the checkpoint in flight restarts the WAL.
        var checkpointRestarts = false
        /// This thread's commits when the checkpoint in flight was asked for.
        var commitsAtCheckpoint = 0
        /// After a restarting checkpoint was held off, the next waits this long (10 ms doubling to 5 s), until
        /// `nextRestart`; both cleared once a restart is done or a passive checkpoint copied every frame.
        var restartBackoff: UInt64 = 0
        var nextRestart: UInt64 = 0
        /// After a failed checkpoint, the next is not tried before this (1 s doubling to 60 s).
        var nextCheckpoint: UInt64 = 0
        var checkpointBackoff: UInt64 = 0
        var checkpointWarning = RepeatingWarning()
        /// Set when the thread must stop: the daemon exits with it.
        var failure: (any Error)?
        /// When the file's header is checked next, and since when it has looked damaged.
        var nextHeaderCheck: UInt64 = 0
        var damagedSince: UInt64?
        var consumerWarning = RepeatingWarning()
        /// When parked transactions are tried again next (every `parked-retry-interval`, and a second after a
        /// pass mirrored something).
        var nextParkedRetry: UInt64 = 0
    }

    /// Stops the thread for good: the daemon logs `error` once, says it in `STATUS=` and exits with the code
    /// ``ErrorReport`` gives it (systemd then restarts the service on the file now at the path).
    func fail(_ error: any Error) {
        shared.withLock { shared in
            shared.failure = error
            shared.lastError = "\(error)"
            shared.changed = true
        }
        events.signal()
    }

    /// The WAL is checkpointed (by the ``Checkpointer`` this thread asks) once nothing was mirrored for this
    /// long, or as soon as its commits took the WAL past ``walPages`` — never inside a commit (see
    /// ``Connection/manageCheckpoints()``) and not after every pass of a steady trickle (each checkpoint ends
    /// in an `fsync`).
    static let quietBeforeCheckpoint: UInt64 = 250_000_000
    /// How often the file's header is checked (``checkHeader(_:_:_:)``).
    static let headerCheckInterval: UInt64 = 1_000_000_000
    /// How far apart the fallback check and the header check may fall and still run in one wake-up
    /// (``aligned(check:header:)``).
    static let alignment: UInt64 = 500_000_000

    /// The WAL's bound in pages (SQLite's own auto-checkpoint's): past it, a passive checkpoint follows the
    /// pass (done whole, it lets the next commit start the WAL over, unless a reader is on the WAL then);
    /// past twice as many, a checkpoint that readies the WAL to start over
    /// (``Connection/restartingCheckpoint(waitingAtMost:)``: it holds the write lock while it waits, so only
    /// when passive ones did not do). A steady stream of commits thus keeps the WAL within about twice this.
    /// Apps' commits run SQLite's own auto-checkpoint while the WAL is past it, as without the daemon.
    static let walPages = 1_000

}
