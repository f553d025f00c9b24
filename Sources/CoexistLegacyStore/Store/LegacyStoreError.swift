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
    /// Optimistic locking: the object's `Z_OPT` is no longer the version the save expected (another writer
    /// changed or deleted it). Nothing of the save was written.
    case conflict(path: String, object: String, expected: Int64, found: Int64?)
    /// The save breaks a rule of the model: a Deny delete rule, a missing mandatory value, a uniqueness
    /// constraint, a value out of range. `detail` names the object and the property. Nothing was written.
    case validation(path: String, detail: String)
    /// A store cannot be created at `path`: a file is already there (creation never overwrites one), or its
    /// folder is missing or not writable. Nothing was written.
    case cannotCreate(path: String, reason: String)

    public var description: String {
        switch self {
        case .file(let problem): problem.description
        case .sqlite(let error): error.description
        case .notCoreDataStore(let path, let reason): "\(path): not a Core Data store (\(reason))"
        case .model(let error): error.description
        case .modelMismatch(let path, let detail): "\(path): the model does not match the store: \(detail)"
        case .invalidData(let path, let detail): "\(path): \(detail)"
        case .conflict(let path, let object, let expected, let found):
            "\(path): \(object) was changed by another writer (expected version \(expected), found "
                + (found.map { "version \($0)" } ?? "it deleted") + ")"
        case .validation(let path, let detail): "\(path): \(detail)"
        case .cannotCreate(let path, let reason): "\(path): cannot create the store: \(reason)"
        }
    }
}
