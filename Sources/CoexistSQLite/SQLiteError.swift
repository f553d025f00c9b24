internal import CSQLite

/// An error returned by SQLite, carrying the extended result code, SQLite's own message and the SQL.
///
/// Bound argument values are never part of the error: they may be user data, and errors end up in logs.
public struct SQLiteError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The extended result code (`sqlite3_extended_errcode`), for example 2067 for `SQLITE_CONSTRAINT_UNIQUE`.
    public var extendedCode: Int32
    /// SQLite's message (`sqlite3_errmsg`) or a description of what the wrapper checked.
    public var message: String
    /// The statement that failed, when there was one.
    public var sql: String?
    /// The database file, when known.
    public var path: String?

    /// Creates an error from its parts.
    public init(extendedCode: Int32, message: String, sql: String? = nil, path: String? = nil) {
        self.extendedCode = extendedCode
        self.message = message
        self.sql = sql
        self.path = path
    }

    /// The primary result code: the low 8 bits of the extended code (`SQLITE_BUSY`, `SQLITE_CORRUPT`, …).
    public var primaryCode: Int32 { extendedCode & 0xFF }

    /// True for `SQLITE_BUSY` and `SQLITE_LOCKED`: the operation may succeed if retried later.
    public var isBusy: Bool { primaryCode == SQLITE_BUSY || primaryCode == SQLITE_LOCKED }

    /// True when the file is not a database or is damaged (`SQLITE_NOTADB`, `SQLITE_CORRUPT`).
    public var isCorruptOrForeign: Bool { primaryCode == SQLITE_NOTADB || primaryCode == SQLITE_CORRUPT }

    /// True for constraint violations (`SQLITE_CONSTRAINT_*`).
    public var isConstraintViolation: Bool { primaryCode == SQLITE_CONSTRAINT }

    /// SQLite's English name for the code, for example "database is locked".
    public var codeDescription: String {
        guard let text = sqlite3_errstr(extendedCode) else { return "unknown error" }
        return String(cString: text)
    }

    public var description: String {
        var text = ""
        if let path { text += "\(path): " }
        text += "SQLite error \(extendedCode) (\(codeDescription)): \(message)"
        if let sql { text += " [SQL: \(sql)]" }
        return text
    }
}
