internal import CSQLite

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

    /// A passive checkpoint: copies what no reader still needs into the database and syncs it, never waiting
    /// for readers or writers. Returns the WAL's frames and how many were checkpointed.
    @discardableResult
    public func checkpoint() throws(SQLiteError) -> (frames: Int, checkpointed: Int) {
        var frames: Int32 = 0
        var checkpointed: Int32 = 0
        let code = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, &frames, &checkpointed)
        guard code == SQLITE_OK || code == SQLITE_BUSY else {
            throw lastError(sql: "sqlite3_wal_checkpoint_v2 PASSIVE")
        }
        walState.frames = 0  // counted again from the next commit: a reader may hold the rest back for long

        return (Int(frames), Int(checkpointed))
    }
}

/// What the WAL hook records.
final class WALHookState {
    var frames = 0
}

/// The C entry point SQLite calls after each commit; `context` is an unretained `WALHookState`.
let walHookCallback: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Int32 =
    { context, _, _, frames in
        if let context { Unmanaged<WALHookState>.fromOpaque(context).takeUnretainedValue().frames = Int(frames) }
        return SQLITE_OK
    }
