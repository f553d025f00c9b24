internal import CSQLite

#if canImport(Glibc)
internal import Glibc
#endif

/// Transactions and savepoints (https://www.sqlite.org/lang_transaction.html). `BEGIN`, `COMMIT`,
/// `SAVEPOINT` and `RELEASE` are prepared once per connection and kept (``run(_:_:)``; a savepoint name
/// each): `sqlite3_exec` parsed `BEGIN` and `COMMIT` again at every transaction, half of their cost
/// (`perf record` of coexistd's event thread: 4 % of its time). The rollbacks of the failure paths are
/// parsed each time.
extension Connection {
    /// Runs `body` in a `BEGIN IMMEDIATE` transaction and commits it; rolls back if `body` or the commit throws.
    ///
    /// `IMMEDIATE` takes the write lock up front, so a busy database is waited for (with the busy handler's
    /// backoff) before any work is done, and a read transaction never has to be upgraded (which in WAL mode can
    /// fail with `SQLITE_BUSY_SNAPSHOT` without calling the busy handler).
    ///
    /// Should SQLite roll the transaction back itself (after an I/O error, a full disk or a lack of memory),
    /// every later statement of `body` throws, and so does the commit: none of them runs outside the
    /// transaction and commits on its own.
    public func write<T>(_ body: () throws -> T) throws -> T {
        try run("BEGIN IMMEDIATE")
        return try finish(body)
    }

    /// Runs `body` in a `BEGIN DEFERRED` transaction, so that every read inside sees one snapshot.
    public func read<T>(_ body: () throws -> T) throws -> T {
        try run("BEGIN DEFERRED")
        return try finish(body)
    }

    /// Runs `body` inside `SAVEPOINT name`; on error rolls back to the savepoint and releases it.
    ///
    /// Savepoints nest inside a transaction. `name` must be a plain identifier.
    public func savepoint<T>(_ name: String = "coexist", _ body: () throws -> T) throws -> T {
        try SQLIdentifier.validate(name)
        let quoted = SQLIdentifier.quoted(name)
        try run("SAVEPOINT \(quoted)")
        do {
            let result = try body()
            try run("RELEASE \(quoted)")
            return result
        } catch {
            try? execute("ROLLBACK TO \(quoted)")
            try? execute("RELEASE \(quoted)")
            throw error
        }
    }

    /// Runs `body` inside a transaction the caller began and ends itself (with `execute`), guarded as
    /// ``write(_:)``'s is: once SQLite has rolled the transaction back itself, every statement throws.
    public func insideTransaction<T>(_ body: () throws -> T) rethrows -> T {
        let outer = inTransactionBlock
        inTransactionBlock = true
        defer { inTransactionBlock = outer }
        return try body()
    }

    private func finish<T>(_ body: () throws -> T) throws -> T {
        do {
            let result = try insideTransaction {
                let result = try body()
                try run("COMMIT")
                return result
            }
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            lastCommitTime = Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
            return result
        } catch {
            if !isAutocommit { try? execute("ROLLBACK") }
            throw error
        }
    }

    /// Throws when the transaction of ``write(_:)``, ``read(_:)`` or ``insideTransaction(_:)`` is no longer
    /// open (SQLite rolled it back itself after an error in it): a statement run now would run, and commit,
    /// on its own.
    func checkTransactionStillOpen(sql: String) throws(SQLiteError) {
        guard inTransactionBlock, isAutocommit else { return }
        throw error(
            SQLITE_ABORT,
            "the transaction is no longer open (SQLite rolls one back itself after an I/O error, a full disk or a "
                + "lack of memory in it): this statement would run on its own",
            sql: sql
        )
    }
}
