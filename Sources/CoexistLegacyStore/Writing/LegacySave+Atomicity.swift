import CoexistSQLite

/// Every public operation of a save is atomic on its own: it runs inside an SQLite savepoint, and if it
/// fails, its writes are rolled back and the save's bookkeeping restored, so that a caller who catches the
/// error can carry on with a consistent save. Nested operations (an `add` that sets the inverse to-one)
/// share their outermost operation's savepoint.
extension LegacySave {
    private struct State {
        var order: [ObjectID]
        var pending: [ObjectID: Pending]
        var bumped: Set<ObjectID>
        var versions: [ObjectID: Int64]
        var deleted: Set<ObjectID>
        var keys: [Int: Int64]
    }

    /// Runs one operation atomically; refuses to run once the save is over.
    func atomically<T>(_ body: () throws -> T) throws -> T {
        guard !finished, !connection.isAutocommit else {
            throw LegacyStoreError.validation(
                path: store.path,
                detail: "the save is over: use a LegacySave only inside the closure given to save(_:_:)"
            )
        }
        if depth > 0 { return try body() }
        depth += 1
        defer { depth -= 1 }
        let saved = State(
            order: order,
            pending: pending,
            bumped: bumped,
            versions: versions,
            deleted: deleted,
            keys: keys.snapshot
        )
        do {
            return try connection.savepoint("coexist_operation", body)
        } catch {
            order = saved.order
            pending = saved.pending
            bumped = saved.bumped
            versions = saved.versions
            deleted = saved.deleted
            keys.restore(saved.keys)
            throw error
        }
    }
}
