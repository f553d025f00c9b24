public import CoexistSQLite

/// Independent raw reads used by tests to check what the libraries report.
public enum RawSQLite {
    /// `SELECT count(*)` of rows with `Z_ENT = number` in `table`.
    public static func count(_ path: String, table: String, entity number: Int) throws -> Int {
        let connection = try Connection(path: path, options: .readOnly)
        let value = try connection.scalar(
            "SELECT count(*) FROM \(SQLIdentifier.quoted(table)) WHERE Z_ENT = ?",
            [.integer(Int64(number))]
        )
        return Int(value.integerValue ?? -1)
    }

    /// Every row of a query, opened read-only.
    public static func rows(_ path: String, _ sql: String) throws -> [[SQLiteValue]] {
        try Connection(path: path, options: .readOnly).rows(sql)
    }

    /// Runs `sql` (several statements allowed) on a read-write connection: for tests that damage a copy.
    public static func execute(_ path: String, _ sql: String) throws {
        try Connection(path: path).execute(sql)
    }
}
