public import CoexistSQLite

/// Creating Core Data's history tables (when a store has none) and growing `ACHANGE`'s tombstone columns.
public enum HistoryTables {
    /// Whether the connection's database has `ATRANSACTION`, `ACHANGE` and `ATRANSACTIONSTRING`.
    public static func exist(_ connection: Connection) throws(SQLiteError) -> Bool {
        for table in ["ATRANSACTION", "ACHANGE", "ATRANSACTIONSTRING"] where try !connection.tableExists(table) {
            return false
        }
        return true
    }

    /// Creates the history tables with Core Data's DDL, indexes and `Z_PRIMARYKEY` rows when absent, and adds
    /// `ZTOMBSTONEn` columns until `ACHANGE` has at least `tombstones`. Returns the tombstone column count.
    ///
    /// Call inside a write transaction.
    @discardableResult
    public static func ensure(_ connection: Connection, tombstones: Int) throws -> Int {
        try connection.schemaDependent("HistoryTables.ensure \(tombstones)") { () throws(SQLiteError) in
            try create(connection, tombstones: tombstones)
        }
    }

    private static func create(_ connection: Connection, tombstones: Int) throws(SQLiteError) -> Int {
        if try !exist(connection) {
            try connection.execute(HistoryDDL.changeTable(tombstones: tombstones))
            for statement in HistoryDDL.otherStatements { try connection.execute(statement) }
            for row in HistoryDDL.primaryKeyRows {
                try connection.run(
                    "INSERT OR IGNORE INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, 0, 0)",
                    [.integer(Int64(row.number)), .text(row.name)]
                )
            }
        }
        var present = try tombstoneColumns(connection).count
        while present < tombstones {
            try connection.execute("ALTER TABLE ACHANGE ADD COLUMN ZTOMBSTONE\(present) BLOB")
            present += 1
        }
        return present
    }

    /// The `ZTOMBSTONEn` columns of `ACHANGE`, in index order.
    public static func tombstoneColumns(_ connection: Connection) throws(SQLiteError) -> [String] {
        try connection.rows("SELECT name FROM pragma_table_info('ACHANGE')").compactMap { $0[0].textValue }
            .filter { $0.hasPrefix("ZTOMBSTONE") && Int($0.dropFirst(10)) != nil }
            .sorted { (Int($0.dropFirst(10)) ?? 0) < (Int($1.dropFirst(10)) ?? 0) }
    }
}
