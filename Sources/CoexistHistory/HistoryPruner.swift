public import CoexistSQLite

/// Deleting old history (Core Data's `deleteHistory(before:)` has the same effect on disk, §4.6): changes
/// first, then their transactions, in one transaction. `Z_MAX` is left as it is, so tokens stay monotonic.
public enum HistoryPruner {
    /// Deletes the transactions with a token at most `token` (and, when given, a timestamp before
    /// `timestamp`, in seconds since 2001), with their `ACHANGE`, `coexist_change` and `coexist_mirror` rows.
    /// Returns how many transactions were deleted.
    @discardableResult
    public static func prune(
        _ connection: Connection,
        upTo token: Int64,
        olderThan timestamp: Double? = nil
    ) throws -> Int {
        let run = {
            let condition = "Z_PK <= ?1" + (timestamp == nil ? "" : " AND ZTIMESTAMP < ?2")
            var arguments: [SQLiteValue] = [.integer(token)]
            if let timestamp { arguments.append(.real(timestamp)) }
            let doomed = "SELECT Z_PK FROM ATRANSACTION WHERE \(condition)"
            try connection.run("DELETE FROM ACHANGE WHERE ZTRANSACTIONID IN (\(doomed))", arguments)
            if try connection.tableExists("coexist_change") {
                try connection.run("DELETE FROM coexist_change WHERE token IN (\(doomed))", arguments)
            }
            if try connection.tableExists("coexist_mirror") {
                try connection.run("DELETE FROM coexist_mirror WHERE source_token IN (\(doomed))", arguments)
            }
            try connection.run("DELETE FROM ATRANSACTION WHERE \(condition)", arguments)
            return connection.changes
        }
        return try connection.isAutocommit ? connection.write(run) : connection.savepoint("coexist_prune", run)
    }

    /// The oldest token still in the history, nil when it is empty.
    public static func oldestToken(_ connection: Connection) throws -> Int64? {
        try connection.scalar("SELECT min(Z_PK) FROM ATRANSACTION").integerValue
    }
}
