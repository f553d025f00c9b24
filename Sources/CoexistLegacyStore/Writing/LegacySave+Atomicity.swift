import CoexistSQLite

/// Every public operation of a save is atomic on its own: it runs inside an SQLite savepoint, and if it
/// fails, its writes are rolled back and the save's bookkeeping restored (``SaveLedger``), so that a caller
/// who catches the error can carry on with a consistent save. Nested operations (an `add` that sets the
/// inverse to-one) share their outermost operation's savepoint. What only Core Data's format keeps (the
/// `Z_OPT` versions read and bumped, the `Z_PK` allocator) is journaled here the same way: each entry's
/// value before its first change in the operation.
extension LegacySave {
    /// What the running operation changed of the Core Data-only state, to undo it.
    struct Journal {
        var versions: [ObjectID: Int64?] = [:]
        var bumped: [ObjectID: Bool] = [:]
        var keys: [Int: Int64]
    }

    /// Runs one operation atomically; refuses to run once the save is over.
    func atomically<T>(_ body: () throws -> T) throws -> T {
        try ledger.atomically(
            on: connection,
            refusal: {
                LegacyStoreError.validation(
                    path: store.path,
                    detail: "the save is over: use a LegacySave only inside the closure given to save(_:_:)"
                )
            },
            begin: { journal = Journal(keys: keys.snapshot) },
            undo: { if let journal { undo(journal) } },
            end: { journal = nil },
            body
        )
    }

    private func undo(_ journal: Journal) {
        for (id, value) in journal.versions { versions[id] = value }
        for (id, held) in journal.bumped {
            if held { bumped.insert(id) } else { bumped.remove(id) }
        }
        keys.restore(journal.keys)
    }

    // MARK: Core Data-only state, journaled

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
}
