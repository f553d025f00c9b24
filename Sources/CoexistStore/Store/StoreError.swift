public import CoexistSQLite

/// Why the new store could not be opened, read or written.
public enum StoreError: Error, Sendable, CustomStringConvertible {
    /// The model cannot be mapped (see ``SchemaError``).
    case schema(SchemaError)
    /// SQLite refused an operation.
    case sqlite(SQLiteError)
    /// The database's new-schema tables do not match the model; `detail` names table and column.
    case mismatch(path: String, detail: String)
    /// The save breaks a rule of the model (Deny, mandatory value, uniqueness, range); `detail` names the
    /// object and the property. Nothing was written.
    case validation(path: String, detail: String)
    /// A stored value that does not fit its column's encoding; names table, row and column.
    case invalidData(path: String, detail: String)
    /// The file's new schema is another model version than the app's (`VersionedSchema`); names both.
    case versionMismatch(path: String, detail: String)

    public var description: String {
        switch self {
        case .schema(let error): error.description
        case .sqlite(let error): error.description
        case .mismatch(let path, let detail): "\(path): the new schema does not match the model: \(detail)"
        case .validation(let path, let detail): "\(path): \(detail)"
        case .invalidData(let path, let detail): "\(path): \(detail)"
        case .versionMismatch(let path, let detail): "\(path): \(detail)"
        }
    }
}
