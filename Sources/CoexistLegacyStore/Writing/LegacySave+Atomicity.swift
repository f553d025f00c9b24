import CoexistSQLite

/// Every public operation of a save is atomic on its own: it runs inside an SQLite savepoint, and if it
/// fails, its writes are rolled back and the save's bookkeeping restored, so that a caller who catches the
/// error can carry on with a consistent save. Nested operations (an `add` that sets the inverse to-one)
/// share their outermost operation's savepoint.
///
/// The bookkeeping is restored from a journal of what the operation changed (each entry's value before its
/// first change), not from a copy of it all: an operation costs what it touches, however large the save.
extension LegacySave {
    /// What the running operation changed in the save's bookkeeping, to undo it.
    struct Journal {
        var pending: [ObjectID: Pending?] = [:]
        var versions: [ObjectID: Int64?] = [:]
        var bumped: [ObjectID: Bool] = [:]
        var deleted: [ObjectID: Bool] = [:]
        /// How many objects ``LegacySave/order`` held before the operation (it only appends, but for
        /// ``removeFromOrder(_:)``, which keeps the whole order first).
        var orderCount: Int
        var order: [ObjectID]?
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
        journal = Journal(orderCount: order.count, keys: keys.snapshot)
        defer {
            depth -= 1
            journal = nil
        }
        do {
            return try connection.savepoint("coexist_operation", body)
        } catch {
            if let journal { undo(journal) }
            throw error
        }
    }

    private func undo(_ journal: Journal) {
        for (id, value) in journal.pending { pending[id] = value }
        for (id, value) in journal.versions { versions[id] = value }
        for (id, held) in journal.bumped {
            if held { bumped.insert(id) } else { bumped.remove(id) }
        }
        for (id, held) in journal.deleted {
            if held { deleted.insert(id) } else { deleted.remove(id) }
        }
        order = Array((journal.order ?? order).prefix(journal.orderCount))
        keys.restore(journal.keys)
    }

    // MARK: Changes, journaled

    func setPending(_ id: ObjectID, _ entry: Pending?) {
        if journal != nil, journal?.pending.keys.contains(id) == false { journal?.pending[id] = .some(pending[id]) }
        pending[id] = entry
    }

    func setVersion(_ id: ObjectID, _ version: Int64?) {
        if journal != nil, journal?.versions.keys.contains(id) == false {
            journal?.versions[id] = .some(versions[id])
        }
        versions[id] = version
    }

    func setBumped(_ id: ObjectID, _ held: Bool) {
        if journal != nil, journal?.bumped[id] == nil { journal?.bumped[id] = bumped.contains(id) }
        if held { bumped.insert(id) } else { bumped.remove(id) }
    }

    func setDeleted(_ id: ObjectID) {
        if journal != nil, journal?.deleted[id] == nil { journal?.deleted[id] = deleted.contains(id) }
        deleted.insert(id)
    }

    func removeFromOrder(_ id: ObjectID) {
        if journal != nil, journal?.order == nil { journal?.order = order }
        order.removeAll { $0 == id }
    }
}
