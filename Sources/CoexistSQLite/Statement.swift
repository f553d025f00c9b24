internal import CSQLite

/// A prepared statement: the single owner of one `sqlite3_stmt*`, finalized in `deinit`.
///
/// Obtain statements from ``Connection/prepare(_:)`` or ``Connection/cachedStatement(_:)``. Binding
/// uses 1-based parameter positions as SQLite does; reading uses 0-based columns.
public final class Statement {
    /// The SQL text the statement was prepared from.
    public let sql: String
    let handle: OpaquePointer
    private unowned let connection: Connection

    init(connection: Connection, sql: String) throws(SQLiteError) {
        self.sql = sql
        self.connection = connection
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(connection.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else {
            if code == SQLITE_OK { throw connection.error(SQLITE_MISUSE, "empty statement", sql: sql) }
            throw connection.lastError(sql: sql)
        }
        handle = statement
    }

    deinit { sqlite3_finalize(handle) }

    /// The number of `?` parameters.
    public var parameterCount: Int { Int(sqlite3_bind_parameter_count(handle)) }

    /// Binds `values` to parameters 1…n; the count must match ``parameterCount``.
    public func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        guard values.count == parameterCount else {
            throw connection.error(
                SQLITE_RANGE,
                "statement takes \(parameterCount) arguments, \(values.count) given",
                sql: sql
            )
        }
        for (offset, value) in values.enumerated() { try bind(value, at: Int32(offset + 1)) }
    }

    /// Binds one value at a 1-based parameter position.
    public func bind(_ value: SQLiteValue, at position: Int32) throws(SQLiteError) {
        let code: Int32
        switch value {
        case .null: code = sqlite3_bind_null(handle, position)
        case .integer(let number): code = sqlite3_bind_int64(handle, position, number)
        case .real(let number): code = sqlite3_bind_double(handle, position, number)
        case .text(let text):
            code = sqlite3_bind_text64(
                handle,
                position,
                text,
                UInt64(text.utf8.count),
                coexist_sqlite_transient(),
                UInt8(SQLITE_UTF8)
            )
        case .blob(let bytes):
            code = bytes.withUnsafeBytes { buffer in
                // A zero-length blob must still be a blob, not NULL: bind_zeroblob keeps the storage class.
                guard let base = buffer.baseAddress, !buffer.isEmpty else {
                    return sqlite3_bind_zeroblob(handle, position, 0)
                }
                return sqlite3_bind_blob64(handle, position, base, UInt64(buffer.count), coexist_sqlite_transient())
            }
        }
        guard code == SQLITE_OK else { throw connection.lastError(sql: sql) }
    }

    /// Advances to the next row: true when a row is available, false when the statement is done.
    public func step() throws(SQLiteError) -> Bool {
        if !isRunning { try connection.checkTransactionStillOpen(sql: sql) }
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = connection.lastError(sql: sql)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Whether it has stepped and is not reset or done yet: a run in progress.
    public var isRunning: Bool { sqlite3_stmt_busy(handle) != 0 }

    /// Resets the statement for another run and clears its bindings.
    public func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// The number of result columns.
    public var columnCount: Int { Int(sqlite3_column_count(handle)) }

    /// The name of result column `index` (0-based).
    public func columnName(_ index: Int) -> String {
        sqlite3_column_name(handle, Int32(index)).map { String(cString: $0) } ?? ""
    }

    /// Whether column `index` (0-based) of the current row is NULL (its value is not read).
    public func isNull(at index: Int) -> Bool { sqlite3_column_type(handle, Int32(index)) == SQLITE_NULL }

    /// The UTF-8 bytes of column `index` (0-based) of the current row when it is text, passed to `body`
    /// without making a `String` (nil for another storage class). The bytes are valid only within `body`.
    public func withText<T>(at index: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T? {
        let column = Int32(index)
        guard sqlite3_column_type(handle, column) == SQLITE_TEXT else { return nil }
        guard let text = sqlite3_column_text(handle, column) else {
            return try body(UnsafeBufferPointer(start: nil, count: 0))
        }
        return try body(UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(handle, column))))
    }

    /// Column `index` (0-based) of the current row read as an integer, as `sqlite3_column_int64` reads it
    /// (NULL is 0; a real or text value is converted): for a column that holds integers only, such as a
    /// rowid, without asking its storage class first.
    public func int64(at index: Int) -> Int64 { sqlite3_column_int64(handle, Int32(index)) }

    /// Column `index` (0-based) of the current row when its storage class is INTEGER, nil otherwise: what
    /// `value(at:).integerValue` gives, without making the value first.
    public func integer(at index: Int) -> Int64? {
        let column = Int32(index)
        return sqlite3_column_type(handle, column) == SQLITE_INTEGER ? sqlite3_column_int64(handle, column) : nil
    }

    /// Column `index` (0-based) of the current row when its storage class is FLOAT, nil otherwise, without
    /// making the value first.
    public func real(at index: Int) -> Double? {
        let column = Int32(index)
        return sqlite3_column_type(handle, column) == SQLITE_FLOAT ? sqlite3_column_double(handle, column) : nil
    }

    /// Column `index` (0-based) of the current row when its storage class is TEXT, nil otherwise: what
    /// `value(at:).textValue` gives, without making the value first.
    public func text(at index: Int) -> String? {
        withText(at: index) { String(decoding: $0, as: UTF8.self) }
    }

    /// The value of column `index` (0-based) of the current row, in its storage class.
    public func value(at index: Int) -> SQLiteValue {
        let column = Int32(index)
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(handle, column))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(handle, column))
        case SQLITE_TEXT:
            guard let text = sqlite3_column_text(handle, column) else { return .text("") }
            let count = Int(sqlite3_column_bytes(handle, column))
            let buffer = UnsafeBufferPointer(start: text, count: count)
            return .text(String(decoding: buffer, as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(handle, column))
            guard let bytes = sqlite3_column_blob(handle, column), count > 0 else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: bytes, count: count)))
        default: return .null
        }
    }
}

/// The current row of a ``Statement``: valid only until the statement steps again or resets.
///
/// Do not keep a row beyond the closure it was passed to: read its values with ``values`` instead.
public struct Row {
    let statement: Statement

    init(statement: Statement) { self.statement = statement }

    /// The number of columns.
    public var count: Int { statement.columnCount }

    /// The value of column `index` (0-based).
    public subscript(index: Int) -> SQLiteValue { statement.value(at: index) }

    /// The UTF-8 bytes of column `index` (0-based) when it is text, passed to `body` without making a
    /// `String` (nil for another storage class); valid only within `body`.
    public func withText<T>(_ index: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T? {
        try statement.withText(at: index, body)
    }

    /// Whether column `index` (0-based) is NULL, without reading its value.
    public func isNull(_ index: Int) -> Bool { statement.isNull(at: index) }

    /// Column `index` (0-based) read as an integer, as `sqlite3_column_int64` reads it (NULL is 0; a real or
    /// text value is converted): for a column that holds integers only, such as a rowid.
    public func int64(_ index: Int) -> Int64 { statement.int64(at: index) }

    /// Column `index` (0-based) when it is an integer, nil otherwise (`self[index].integerValue`, without
    /// making the value first).
    public func integer(_ index: Int) -> Int64? { statement.integer(at: index) }

    /// Column `index` (0-based) when it is text, nil otherwise (`self[index].textValue`, without making the
    /// value first).
    public func text(_ index: Int) -> String? { statement.text(at: index) }

    /// Column `index` (0-based) when it is a real (FLOAT), nil otherwise, without making the value first.
    public func real(_ index: Int) -> Double? { statement.real(at: index) }

    /// The name of column `index` (0-based).
    public func name(_ index: Int) -> String { statement.columnName(index) }

    /// Every column's value, in order.
    public var values: [SQLiteValue] { (0..<count).map { statement.value(at: $0) } }
}
