import CoexistSQLite

/// Each public operation runs in an SQLite savepoint; a failing one is rolled back with the save's
/// bookkeeping (``SaveLedger``), nested operations share the outermost savepoint.
extension NewSave {
    func atomically<T>(_ body: () throws -> T) throws -> T {
        try ledger.atomically(
            on: connection,
            refusal: {
                StoreError.validation(
                    path: store.path,
                    detail: "the save is over: use a NewSave only inside its closure"
                )
            },
            body
        )
    }
}
