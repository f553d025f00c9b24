import CoexistBridge
import CoexistRuntime

/// One round of the bridge thread's work on the file: a bounded mirroring pass, and the check of the file's
/// header.
extension BridgeWorker {
    /// One bridge pass; returns whether more may be pending (not when the pass caught up). Failures back off
    /// (50 ms doubling to 5 s).
    func mirror(_ engine: SyncEngine, _ state: inout LoopState) -> Bool {
        inPass.store(true, ordering: .releasing)
        defer { inPass.store(false, ordering: .releasing) }
        do {
            let result = try engine.pass()
            if state.backoff > 0 { logger.notice("mirroring resumed") }
            state.backoff = 0
            state.lastError = nil
            shared.withLock { shared in
                shared.mirrored += result.mirrored
                shared.conflicts += result.conflicts
                shared.parked += result.parked
                shared.handledSinceStatus += result.handled
                shared.lastError = nil
            }
            if result.mirrored > 0 {
                // What blocked a parked transaction may have changed with this one.
                state.nextParkedRetry = min(state.nextParkedRetry, Monotonic.now() + 1_000_000_000)
            }
            if result.handled > 0 {
                events.signal()
                logger.debug(
                    "mirrored \(result.mirrored) of \(result.handled) transactions",
                    fields: [.token: "\(result.cursor)"]
                )
            }
            return result.handled > 0 && !result.caughtUp
        } catch {
            if SyncEngine.isCorruption(error) {
                state.failure = error
                fail(error)
                return false
            }
            state.backoff = min(max(state.backoff * 2, 50_000_000), 5_000_000_000)
            let text = "\(error)"
            if text != state.lastError {
                logger.warning(
                    "mirroring failed, retrying in \(state.backoff / 1_000_000) ms: \(text)",
                    fields: [.event: "mirror-failed"]
                )
            }
            state.lastError = text
            shared.withLock { shared in
                shared.lastError = text
                shared.changed = true
            }
            return false
        }
    }

    /// Reads the database file's header about once a second: a file truncated or overwritten under the
    /// daemon is noticed even when nothing is read from the missing pages. A checkpoint by another process
    /// can make the header describe pages not yet written, briefly, or for good when that process was killed
    /// in between: a header that counts more pages than the file has gets a passive checkpoint first (which
    /// writes the pages still in the WAL), and only a problem that lasts a second is reported
    /// (``DatabaseFileHeader/Problem``: the daemon exits 65).
    func checkHeader(_ engine: SyncEngine, _ now: UInt64, _ state: inout LoopState) throws {
        guard now >= state.nextHeaderCheck else { return }
        do {
            do {
                _ = try identity.header(live: true)
            } catch .truncated {
                _ = try? engine.connection.rows("PRAGMA wal_checkpoint(PASSIVE)")
                _ = try identity.header(live: true)
            }
            state.damagedSince = nil
            state.nextHeaderCheck = now + Self.headerCheckInterval
            // A mirror backoff's retry keeps its wait.
            if state.backoff == 0 {
                (state.nextCheck, state.nextHeaderCheck) = Self.aligned(
                    check: state.nextCheck,
                    header: state.nextHeaderCheck
                )
            }
        } catch {
            let since = state.damagedSince ?? now
            state.damagedSince = since
            if now >= since + 1_000_000_000 { throw error }
            state.nextHeaderCheck = now + 200_000_000
        }
    }
}
