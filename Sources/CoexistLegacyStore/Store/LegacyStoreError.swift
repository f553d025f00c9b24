public import CoexistModel
public import CoexistSQLite

/// Why a Core Data store could not be opened, read or written; each case names the file.
public enum LegacyStoreError: Error, Sendable, CustomStringConvertible {
    /// The file is missing, empty, truncated or not SQLite (checked before SQLite opens it).
    case file(DatabaseFileHeader.Problem)
    /// SQLite refused an operation.
    case sqlite(SQLiteError)
    /// An SQLite database that is not a Core Data store; `reason` says what is missing.
    case notCoreDataStore(path: String, reason: String)
    /// The model could not be read.
    case model(ModelError)
    /// The model and the store disagree: `detail` names the entity or property.
    case modelMismatch(path: String, detail: String)
    /// A value in the store that cannot be decoded; `detail` names table, row and column.
    case invalidData(path: String, detail: String)

    public var description: String {
        switch self {
        case .file(let problem): problem.description
        case .sqlite(let error): error.description
        case .notCoreDataStore(let path, let reason): "\(path): not a Core Data store (\(reason))"
        case .model(let error): error.description
        case .modelMismatch(let path, let detail): "\(path): the model does not match the store: \(detail)"
        case .invalidData(let path, let detail): "\(path): \(detail)"
        }
    }
}
