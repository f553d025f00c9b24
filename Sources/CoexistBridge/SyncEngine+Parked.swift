import CoexistHistory
import CoexistLegacyStore
import CoexistSQLite
import CoexistStore

extension SyncEngine {
    /// What one round of retrying parked transactions did.
    public struct RetryResult: Sendable, Equatable {
        /// Parked transactions tried again.
        public var retried = 0
        /// Of those, the ones now mirrored (and no longer parked).
        public var mirrored = 0
    }

    /// Mirrors parked transactions again, oldest first (at most `limit`), in one write transaction, and
    /// only when nothing else is pending: with both sides caught up, the current state of the objects a
    /// parked transaction touched is the state both sides must converge to, so mirroring it again (each
    /// transaction in its own savepoint, as a pass does) can only put the target in a state the source
    /// has. A transaction that mirrors leaves `coexist_parked` and gets its `coexist_mirror` row; one that
    /// still fails keeps its place with the new error. Busy, I/O and corruption errors are thrown, as from a
    /// pass.
    public func retryParked(limit: Int = 64) throws -> RetryResult {
        guard try parkedCount() > 0 else { return RetryResult() }
        defer { dropReadAhead() }  // identities may have been recorded: read the window again
        return try connection.write {
            var result = RetryResult()
            guard let cursor = try cursor(), try reader.lastToken() <= cursor else { return result }
            let rows = try connection.rows(
                "SELECT token FROM coexist_parked ORDER BY token LIMIT ?",
                [.integer(Int64(limit))]
            )
            for token in rows.compactMap({ $0.first?.integerValue }) {
                result.retried += 1
                guard let transaction = try reader.transaction(token) else {
                    try park(token, error: "its history was pruned before it could be mirrored again")
                    continue
                }
                do {
                    let mirrored = try connection.savepoint("coexist_retry") {
                        let token = try mirror(
                            [transaction],
                            conflicts: ConflictResolver(engine: self),
                            name: Self.saveName(transaction, transaction)
                        )
                        try checkForeignKeys()
                        return token
                    }
                    try connection.run("DELETE FROM coexist_parked WHERE token = ?", [.integer(token)])
                    if let mirrored { try recordMirror(transaction, token: mirrored) }
                    result.mirrored += 1
                } catch {
                    if Self.isTransient(error) || Self.isCorruption(error) { throw error }
                    try park(token, error: "\(error)")
                }
            }
            try retryParkedObjects(limit: limit, into: &result)
            return result
        }
    }

    /// The oldest parked item (transaction or object), described for `status`; nil when nothing is parked.
    public func oldestParked() throws -> String? {
        let rows = try connection.rows(
            """
            SELECT 'transaction ' || token || ' (' || side || '): ' || error, parked_at FROM coexist_parked
            UNION ALL
            SELECT side || ' ' || entity || ' Z_PK ' || pk || ': ' || reason, parked_at FROM coexist_parked_object
            ORDER BY 2 LIMIT 1
            """
        )
        return rows.first?.first?.textValue
    }

    /// Records a new error for a transaction that stays parked (keeping when it was first parked).
    /// Parked objects (legacy objects whose identity another object had): each one the legacy side still
    /// holds is mirrored as if just inserted, in one savepoint; one whose identity is now unique (the other
    /// object deleted, or given another id, with nothing touching this one) mirrors and leaves the table,
    /// one still shared is parked again; one gone from the legacy side just leaves the table.
    private func retryParkedObjects(limit: Int, into result: inout RetryResult) throws {
        // In turns of `limit`, from where the last round stopped, so that every parked object gets its turn.
        let after = parkedObjectsAfter ?? ("", Int64.min)
        let rows = try connection.rows(
            """
            SELECT entity, pk FROM coexist_parked_object
            WHERE side = 'legacy' AND (entity > ?1 OR (entity = ?1 AND pk > ?2)) ORDER BY entity, pk LIMIT ?3
            """,
            [.text(after.0), .integer(after.1), .integer(Int64(limit))]
        )
        parkedObjectsAfter =
            rows.count < limit
            ? nil : rows.last.flatMap { row in row[0].textValue.map { ($0, row[1].integerValue ?? 0) } }
        var objects: [ObjectID] = []
        for row in rows {
            guard let root = row[0].textValue, let pk = row[1].integerValue else { continue }
            guard let object = try legacy.object(ObjectID(entity: root, pk: pk)) else {
                try identities.unpark(ObjectID(entity: root, pk: pk))
                continue
            }
            objects.append(object.id)
        }
        guard !objects.isEmpty else { return }
        let before = try parkedCount()
        do {
            _ = try connection.savepoint("coexist_retry_objects") {
                let token = try LegacyToNew(engine: self, conflicts: ConflictResolver(engine: self)).mirror(
                    objects: objects,
                    bridgeMetadata(contextName: "parked objects")
                )
                try checkForeignKeys()
                return token
            }
        } catch {
            if Self.isTransient(error) || Self.isCorruption(error) { throw error }
            report(BridgeNotice(.retryFailed, "parked objects could not be mirrored again: \(error)"))
            return
        }
        result.retried += objects.count
        result.mirrored += max(0, before - (try parkedCount()))
    }

    /// Parks a source transaction that could not be mirrored, with the error.
    func park(_ token: Int64, side: Side, error: String) throws {
        try connection.run(
            "INSERT OR REPLACE INTO coexist_parked (token, side, error, parked_at) VALUES (?, ?, ?, ?)",
            [.integer(token), .text(side.rawValue), .text(error), .real(TransactionWriter.now())]
        )
    }

    private func park(_ token: Int64, error: String) throws {
        try connection.run("UPDATE coexist_parked SET error = ? WHERE token = ?", [.text(error), .integer(token)])
    }
}
