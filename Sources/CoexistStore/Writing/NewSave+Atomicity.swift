import CoexistSQLite

/// Each public operation runs in an SQLite savepoint; a failing one is rolled back with the save's
/// bookkeeping, nested operations share the outermost savepoint.
extension NewSave {
    private struct State {
        var order: [ObjectRef]
        var pending: [ObjectRef: Pending]
        var deleted: Set<ObjectRef>
    }

    func atomically<T>(_ body: () throws -> T) throws -> T {
        guard !finished, !connection.isAutocommit else {
            throw StoreError.validation(
                path: store.path,
                detail: "the save is over: use a NewSave only inside its closure"
            )
        }
        if depth > 0 { return try body() }
        depth += 1
        defer { depth -= 1 }
        let saved = State(order: order, pending: pending, deleted: deleted)
        do {
            return try connection.savepoint("coexist_operation", body)
        } catch {
            order = saved.order
            pending = saved.pending
            deleted = saved.deleted
            throw error
        }
    }
}
