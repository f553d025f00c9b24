public import CoexistSQLite

/// Whether a reader of the history missed something because it was deleted: a context that merges "after
/// its last token" must know when transactions after that token are gone, not skip them in silence (Core
/// Data reports an expired history token then).
public enum HistoryGaps {
    /// The last token issued (`Z_PRIMARYKEY` 16002's `Z_MAX`; the newest transaction, also when history was
    /// deleted since): where a new reader starts.
    public static func lastIssuedToken(_ connection: Connection) throws -> Int64 {
        let issued =
            try connection.scalar(
                "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?",
                [.integer(Int64(TransactionWriter.transactionEntity))]
            ).integerValue ?? 0
        let newest = try connection.scalar("SELECT max(Z_PK) FROM ATRANSACTION").integerValue ?? 0
        return max(issued, newest)
    }

    /// When history after `token` was deleted, the token a reader can go on after (just before the oldest
    /// transaction left, or the last issued one when none is left); nil when nothing after `token` is missing.
    public static func deleted(after token: Int64, _ connection: Connection) throws -> Int64? {
        if let oldest = try HistoryPruner.oldestToken(connection) {
            return token < oldest - 1 ? oldest - 1 : nil
        }
        let issued = try lastIssuedToken(connection)
        return issued > token ? issued : nil
    }
}
