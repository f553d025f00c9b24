/// Results that depend only on the database schema, computed once per schema.
extension Connection {
    /// The value of `PRAGMA schema_version`: it changes whenever any connection changes the schema
    /// (https://www.sqlite.org/pragma.html#pragma_schema_version).
    public func schemaVersion() throws(SQLiteError) -> Int64 {
        try scalar("PRAGMA schema_version").integerValue ?? 0
    }

    /// `compute`'s result, reused while the schema version stays what it was when it was computed.
    ///
    /// For work that reads (or idempotently creates) schema: table lists, "create if missing". A result
    /// whose computation changed the schema is not kept, so the next call computes again and sees the
    /// committed state (or, after a rollback, the old one). `key` names the computation and its inputs.
    public func schemaDependent<T>(_ key: String, _ compute: () throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        let before = try schemaVersion()
        if let memo = schemaMemo[key], memo.version == before, let value = memo.value as? T { return value }
        let value = try compute()
        if try schemaVersion() == before { schemaMemo[key] = (before, value) }
        return value
    }
}
