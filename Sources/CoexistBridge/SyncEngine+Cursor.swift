import CoexistHistory
public import CoexistSQLite

/// The bridge's cursor: the last token it has handled, how far it may move past its own mirrors, and the
/// token at which both schemas agree.
extension SyncEngine {
    /// The last token the bridge has handled, nil before the first run (initial sync not started).
    public func cursor() throws -> Int64? {
        try connection.scalar("SELECT cursor FROM coexist_bridge WHERE id = 1").integerValue
    }

    /// The last token in the history.
    public func lastToken() throws -> Int64 { try reader.lastToken() }

    /// The last token when, as `connection` reads the file now, its two schemas hold the same state: the
    /// bridge has handled every transaction (its cursor is the last token) and parked none. Nil otherwise.
    /// Read inside a read transaction, it says whether that snapshot's rows, on either side, are the state
    /// as of that token.
    public static func agreedToken(_ connection: Connection) throws -> Int64? {
        guard let cursor = try connection.scalar("SELECT cursor FROM coexist_bridge WHERE id = 1").integerValue else {
            return nil
        }
        let last = try connection.scalar("SELECT max(Z_PK) FROM ATRANSACTION").integerValue ?? 0
        guard cursor >= last, try BridgeTables.parkedCount(connection) == 0 else { return nil }
        // The cursor, not the last token kept: retention may have pruned every transaction up to it.
        return cursor
    }

    /// The last token when every transaction after `token` is the bridge's own (the pass's mirrors: the next
    /// pass would skip them, by the same author test, so the cursor may pass them now — one commit per
    /// mirrored snapshot, not two); nil when another follows `token`. The pass holds the write lock: no
    /// transaction can land meanwhile.
    func lastOwnToken(after token: Int64) throws -> Int64? {
        let arguments: [SQLiteValue] = [.integer(token), .text(configuration.author)]
        let foreign = try connection.scalar(
            """
            SELECT count(*) FROM ATRANSACTION t LEFT JOIN ATRANSACTIONSTRING a ON a.Z_PK = t.ZAUTHORTS
            WHERE t.Z_PK > ?1 AND coalesce(a.ZNAME, t.ZAUTHOR) IS NOT ?2
            """,
            arguments
        )
        guard foreign.integerValue == 0 else { return nil }
        return try connection.scalar("SELECT max(Z_PK) FROM ATRANSACTION WHERE Z_PK > ?", [arguments[0]]).integerValue
            ?? token
    }

    func setCursor(_ token: Int64) throws {
        try connection.run(
            """
            INSERT INTO coexist_bridge (id, cursor, updated_at) VALUES (1, ?1, ?2)
            ON CONFLICT (id) DO UPDATE SET cursor = max(cursor, ?1), updated_at = ?2
            """,
            [.integer(token), .real(TransactionWriter.now())]
        )
    }
}
