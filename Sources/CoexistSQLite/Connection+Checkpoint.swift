internal import CSQLite

#if canImport(Glibc)
import Glibc
#endif

/// WAL checkpoints at moments the caller picks (https://www.sqlite.org/wal.html#ckpt).
///
/// By default every connection checkpoints inside the `COMMIT` that takes the WAL past 1,000 pages: that
/// commit then waits for the copy and its `fsync`. A connection that calls ``manageCheckpoints()`` stops
/// doing so and reads ``walFrames`` after each commit instead, to run ``checkpoint()`` off its latency path
/// (when idle, or once the WAL passes a bound).
extension Connection {
    /// Replaces SQLite's auto-checkpoint on this connection by a WAL hook that only records the WAL's size.
    public func manageCheckpoints() {
        sqlite3_wal_hook(handle, walHookCallback, Unmanaged.passUnretained(walState).toOpaque())
    }

    /// Frames in the WAL after this connection's last commit; 0 before any, after ``checkpoint()``, and
    /// without ``manageCheckpoints()``.
    public var walFrames: Int { walState.frames }

    /// Counts the WAL's frames again from the next commit, as after a checkpoint: for a caller that had
    /// another connection checkpoint.
    public func forgetWALFrames() { walState.frames = 0 }

    /// This connection's commits so far (with ``manageCheckpoints()``): a caller that had another
    /// connection checkpoint tells whether it committed meanwhile.
    public var walCommits: Int { walState.commits }

    /// A passive checkpoint: copies what no reader still needs into the database and syncs it, never waiting
    /// for readers or writers. Returns the WAL's frames and how many were checkpointed.
    @discardableResult
    public func checkpoint() throws(SQLiteError) -> (frames: Int, checkpointed: Int) {
        var frames: Int32 = 0
        var checkpointed: Int32 = 0
        let code = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, &frames, &checkpointed)
        guard code == SQLITE_OK || code & 0xff == SQLITE_BUSY else {
            throw lastError(sql: "sqlite3_wal_checkpoint_v2 PASSIVE")
        }
        walState.frames = 0  // counted again from the next commit: a reader may hold the rest back for long

        return (Int(frames), Int(checkpointed))
    }

    /// A checkpoint after which the next write starts the WAL over (`SQLITE_CHECKPOINT_RESTART`): within
    /// `milliseconds` in all, it waits for another connection's checkpoint (tried again every 200 µs), for
    /// the write lock, copies what is left, then waits for every reader to leave the WAL. Returns false when
    /// the time ran out (nothing is lost: the WAL goes on growing until the next try). Under a steady stream
    /// of commits from both sides a passive checkpoint rarely finds the WAL free of readers: the WAL would
    /// grow without bound, and every app's commit past SQLite's auto-checkpoint bound run a checkpoint.
    public func restartingCheckpoint(waitingAtMost milliseconds: Int) throws(SQLiteError) -> Bool {
        let configured = busyState.timeoutNanoseconds
        defer { busyState.timeoutNanoseconds = configured }
        let limit = UInt64(max(0, milliseconds)) * 1_000_000
        let start = BusyHandlerState.monotonicNanoseconds()
        while true {
            let waited = BusyHandlerState.monotonicNanoseconds() &- start
            busyState.timeoutNanoseconds = limit > waited ? limit - waited : 0
            let code = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_RESTART, nil, nil)
            if code == SQLITE_OK {
                walState.frames = 0
                return true
            }
            guard code & 0xff == SQLITE_BUSY else { throw lastError(sql: "sqlite3_wal_checkpoint_v2 RESTART") }
            guard BusyHandlerState.monotonicNanoseconds() &- start + 200_000 < limit else { return false }
            usleep(200)
        }
    }
}

/// What the WAL hook records.
final class WALHookState {
    var frames = 0
    var commits = 0
}

/// The C entry point SQLite calls after each commit; `context` is an unretained `WALHookState`.
let walHookCallback: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Int32 =
    { context, _, _, frames in
        if let context {
            let state = Unmanaged<WALHookState>.fromOpaque(context).takeUnretainedValue()
            state.frames = Int(frames)
            state.commits &+= 1
        }
        return SQLITE_OK
    }
