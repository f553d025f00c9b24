internal import CSQLite

/// The SQL functions that Core Data's persistent derived-attribute triggers call
/// (coredata-sqlite-format.md §1.5). Core Data uses them to update its in-memory caches; out of process
/// they have nothing to do, but without them any write to a table with such a trigger fails with
/// "no such function".
let coreDataTriggerFunctionNames = [
    "NSCoreDataDATriggerUpdatedAffectedObjectValue",
    "NSCoreDataDATriggerInsertUpdatedAffectedObjectValue",
]

private let noOpFunction: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
    context,
    _,
    _ in
    sqlite3_result_null(context)
}

extension Connection {
    /// Registers Core Data's derived-attribute trigger functions as no-ops returning NULL.
    ///
    /// They are `SQLITE_INNOCUOUS` so that schema triggers may call them even with `trusted_schema=OFF`
    /// (https://www.sqlite.org/c3ref/c_deterministic.html), and take any number of arguments.
    public func registerCoreDataTriggerFunctions() throws(SQLiteError) {
        for name in coreDataTriggerFunctionNames {
            let code = sqlite3_create_function_v2(
                handle,
                name,
                -1,
                SQLITE_UTF8 | SQLITE_INNOCUOUS,
                nil,
                noOpFunction,
                nil,
                nil,
                nil
            )
            guard code == SQLITE_OK else { throw lastError(sql: nil) }
        }
    }
}
