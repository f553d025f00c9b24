internal import CSQLite

/// A Swift function callable from SQL.
final class FunctionBox {
    let body: ([SQLiteValue]) -> SQLiteValue
    init(_ body: @escaping ([SQLiteValue]) -> SQLiteValue) { self.body = body }
}

private let functionCallback: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
    context,
    count,
    arguments in
    guard let context, let user = sqlite3_user_data(context) else { return }
    let box = Unmanaged<FunctionBox>.fromOpaque(user).takeUnretainedValue()
    var values: [SQLiteValue] = []
    for index in 0..<Int(count) {
        let value = arguments?[index]
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER: values.append(.integer(sqlite3_value_int64(value)))
        case SQLITE_FLOAT: values.append(.real(sqlite3_value_double(value)))
        case SQLITE_TEXT:
            let length = Int(sqlite3_value_bytes(value))
            if let text = sqlite3_value_text(value) {
                values.append(.text(String(decoding: UnsafeBufferPointer(start: text, count: length), as: UTF8.self)))
            } else {
                values.append(.text(""))
            }
        case SQLITE_BLOB:
            let length = Int(sqlite3_value_bytes(value))
            if let bytes = sqlite3_value_blob(value), length > 0 {
                values.append(.blob(Array(UnsafeRawBufferPointer(start: bytes, count: length))))
            } else {
                values.append(.blob([]))
            }
        default: values.append(.null)
        }
    }
    switch box.body(values) {
    case .null: sqlite3_result_null(context)
    case .integer(let number): sqlite3_result_int64(context, number)
    case .real(let number): sqlite3_result_double(context, number)
    case .text(let text):
        sqlite3_result_text64(context, text, UInt64(text.utf8.count), coexist_sqlite_transient(), UInt8(SQLITE_UTF8))
    case .blob(let bytes):
        bytes.withUnsafeBytes { buffer in
            sqlite3_result_blob64(context, buffer.baseAddress, UInt64(buffer.count), coexist_sqlite_transient())
        }
    }
}

private let functionDestroy: @convention(c) (UnsafeMutableRawPointer?) -> Void = { pointer in
    guard let pointer else { return }
    Unmanaged<FunctionBox>.fromOpaque(pointer).release()
}

extension Connection {
    /// Registers a deterministic, innocuous SQL function implemented in Swift
    /// (https://www.sqlite.org/c3ref/create_function.html).
    ///
    /// - Parameters:
    ///   - name: the SQL name.
    ///   - arity: the number of arguments, or -1 for any.
    ///   - body: computes the result from the arguments; it must not use this connection.
    public func createFunction(
        _ name: String,
        arity: Int32,
        _ body: @escaping ([SQLiteValue]) -> SQLiteValue
    ) throws(SQLiteError) {
        let box = Unmanaged.passRetained(FunctionBox(body)).toOpaque()
        let code = sqlite3_create_function_v2(
            handle,
            name,
            arity,
            SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
            box,
            functionCallback,
            nil,
            nil,
            functionDestroy
        )
        guard code == SQLITE_OK else { throw lastError(sql: nil) }
    }
}
