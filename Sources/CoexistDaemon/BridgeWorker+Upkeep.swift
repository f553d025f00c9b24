import CoexistBridge
import CoexistEvents
import CoexistHistory
import CoexistRuntime
import CoexistSQLite

/// The bridge thread's upkeep besides mirroring: consumers' positions, parked transactions, checkpoints
/// and history pruning.
extension BridgeWorker {
    /// Writes the consumers' positions posted since the last round (one write transaction) and wakes the
    /// event thread to answer them; a failure leaves them posted for the next round.
    func recordConsumers(_ connection: Connection, _ state: inout LoopState) {
        guard consumers.pendingCount > 0 else { return }
        do {
            if try consumers.write(to: connection) > 0 { events.signal() }
        } catch {
            if SyncEngine.isCorruption(error) {
                state.failure = error
                fail(error)
                return
            }
            state.consumerWarning.occurred(
                "recording consumer positions failed (retried): \(error)",
                logger: logger,
                now: Monotonic.now()
            )
        }
    }

    /// Tries parked transactions and objects again once both sides are caught up (``SyncEngine/retryParked(limit:)``).
    func retryParked(_ engine: SyncEngine, _ state: inout LoopState) {
        state.nextParkedRetry = Monotonic.now() + settings.parkedRetryInterval
        do {
            let result = try engine.retryParked()
            if result.mirrored > 0 {
                logger.notice(
                    "\(result.mirrored) of \(result.retried) parked transactions and objects mirrored on retry",
                    fields: [.event: "parked-mirrored"]
                )
                shared.withLock { $0.changed = true }
                events.signal()
            }
        } catch {
            if SyncEngine.isCorruption(error) {
                state.failure = error
                fail(error)
                return
            }
            logger.warning(
                "retrying parked transactions failed (tried again later): \(error)",
                fields: [.event: "retry-failed"]
            )
        }
    }

    /// Asks the checkpoint thread for a passive checkpoint; with `restart`, one that also readies the WAL to
    /// start over (``Checkpointer``). Nothing is asked while one is in flight.
    func requestCheckpoint(_ connection: Connection, _ state: inout LoopState, restart: Bool = false) {
        guard !state.checkpointInFlight, let checkpointer = state.checkpointer,
            checkpointer.request(restart: restart)
        else { return }
        state.checkpointInFlight = true
        state.checkpointRestarts = restart
        state.commitsAtCheckpoint = connection.walCommits
    }

    /// Takes in how the last checkpoint went. Done: the WAL's size is counted again from the next commit
    /// (unless this thread committed meanwhile: its count is then the WAL's size at that commit). Held off:
    /// tried again after 10 ms; a restarting one is tried again after 10 ms doubling to 5 s, until a
    /// checkpoint finds no reader holding any frame back. Failures back off (1 s
    /// doubling to 60 s) with a warning; a damaged file stops the thread.
    func checkpointFinished(_ connection: Connection, _ state: inout LoopState) {
        guard state.checkpointInFlight, let outcome = state.checkpointer?.takeOutcome() else { return }
        state.checkpointInFlight = false
        let now = Monotonic.now()
        switch outcome {
        case .done(let whole):
            if connection.walCommits == state.commitsAtCheckpoint { connection.forgetWALFrames() }
            state.checkpointBackoff = 0
            state.nextCheckpoint = 0
            // A restart done, or no reader holding any frame back: the readers that held restarts off left.
            if state.checkpointRestarts || whole {
                state.restartBackoff = 0
                state.nextRestart = 0
            }
            state.checkpointWarning.recovered("checkpoints succeed again", logger: logger)
        case .heldOff:
            if state.checkpointRestarts {
                state.restartBackoff = min(max(state.restartBackoff * 2, 10_000_000), 5_000_000_000)
                state.nextRestart = now + state.restartBackoff
            }
            state.nextCheckpoint = now + 10_000_000
        case .failed(let error):
            if SyncEngine.isCorruption(error) {
                state.failure = error
                fail(error)
                return
            }
            state.checkpointBackoff = min(max(state.checkpointBackoff * 2, 1_000_000_000), 60_000_000_000)
            state.nextCheckpoint = now + state.checkpointBackoff
            state.checkpointWarning.occurred(
                "checkpoint failed, retrying in \(state.checkpointBackoff / 1_000_000_000) s: \(error)",
                logger: logger,
                now: now
            )
        }
    }

    /// Prunes history older than the retention that the bridge has mirrored and every durable consumer
    /// (heard from within the consumer expiry) has acknowledged.
    static func pruneHistory(
        connection: Connection,
        engine: SyncEngine,
        settings: Settings,
        logger: Logger,
        pending: Int64? = nil
    ) throws {
        guard settings.historyRetention > 0, let cursor = try HistoryHolds.bridge(connection) else { return }
        let now = TransactionWriter.now()
        let activeSince = settings.consumerExpiry > 0 ? now - Double(settings.consumerExpiry) / 1e9 : nil
        try ConsumerTable.create(connection)
        let consumers = try ConsumerTable.lowestNeeded(connection, activeSince: activeSince)
        for name in consumers.expired {
            logger.warning(
                "durable consumer \(name) expired: it no longer holds history back",
                fields: [.event: "consumer-expired", .consumer: name]
            )
        }
        let bound = min(cursor, consumers.token ?? cursor, pending ?? cursor)
        let pruned = try HistoryPruner.prune(
            connection,
            upTo: bound,
            olderThan: now - Double(settings.historyRetention) / 1e9
        )
        if pruned > 0 {
            logger.info(
                "pruned \(pruned) history transactions older than the retention (never past token \(bound))",
                fields: [.event: "pruned", .token: "\(bound)"]
            )
        }
    }
}
