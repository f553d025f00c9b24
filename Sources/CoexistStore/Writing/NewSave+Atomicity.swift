import CoexistSQLite

/// Each public operation runs in an SQLite savepoint; a failing one is rolled back with the save's
/// bookkeeping, nested operations share the outermost savepoint.
///
/// The bookkeeping is undone from a log of what the operation changed (``NewSave/undo``), not restored from
/// a copy: a copy would make every insert of a large save copy the whole pending table.
extension NewSave {
    /// One change to the bookkeeping, and what undoes it.
    enum Undo {
        /// `pending[ref]` was this before.
        case pending(ObjectRef, Pending?)
        /// A reference was appended to `order`.
        case appendedToOrder
        /// `order` was this before.
        case order([ObjectRef])
        /// The reference was added to `deleted`.
        case deleted(ObjectRef)
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
        undo.removeAll(keepingCapacity: true)
        defer {
            depth -= 1
            undo.removeAll(keepingCapacity: true)
        }
        do {
            return try connection.savepoint("coexist_operation", body)
        } catch {
            for entry in undo.reversed() {
                switch entry {
                case .pending(let ref, let previous): pending[ref] = previous
                case .appendedToOrder: order.removeLast()
                case .order(let previous): order = previous
                case .deleted(let ref): deleted.remove(ref)
                }
            }
            throw error
        }
    }
}
