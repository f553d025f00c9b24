internal import CSQLite

/// The SQL functions that Core Data's persistent derived-attribute triggers call
/// (coredata-sqlite-format.md §1.5). Core Data uses them to update its in-memory caches; out of process
/// they have nothing to do, but without them any write to a table with such a trigger fails with
/// "no such function".
let coreDataTriggerFunctionNames = [
    "NSCoreDataDATriggerUpdatedAffectedObjectValue",
    "NSCoreDataDATriggerInsertUpdatedAffectedObjectValue",
    "NSCoreDataTriggerUpdateAffectedObjectValue",
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
    ///
    /// Besides the names known from real stores (§1.5 and Photos' `NSCoreDataTriggerUpdateAffectedObjectValue`),
    /// every `NSCoreData…(` call found in the schema's triggers is registered too, so a store made by a newer
    /// Core Data with another such function stays writable.
    public func registerCoreDataTriggerFunctions() throws(SQLiteError) {
        var names = Set(coreDataTriggerFunctionNames)
        for row in try rows("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND sql LIKE '%NSCoreData%'") {
            guard let sql = row[0].textValue else { continue }
            names.formUnion(Self.coreDataFunctionCalls(in: sql))
        }
        for name in names.sorted() {
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

    /// The names of `NSCoreData…(` function calls in `sql`.
    static func coreDataFunctionCalls(in sql: String) -> Set<String> {
        var names: Set<String> = []
        let characters = Array(sql.utf8)
        let prefix = Array("NSCoreData".utf8)
        var index = 0
        while index + prefix.count <= characters.count {
            guard characters[index..<(index + prefix.count)].elementsEqual(prefix) else {
                index += 1
                continue
            }
            var end = index
            while end < characters.count,
                characters[end] == 0x5F || (0x30...0x39).contains(characters[end])
                    || (0x41...0x5A).contains(characters[end]) || (0x61...0x7A).contains(characters[end])
            {
                end += 1
            }
            if end < characters.count, characters[end] == 0x28 {
                names.insert(String(decoding: characters[index..<end], as: UTF8.self))
            }
            index = end
        }
        return names
    }
}
