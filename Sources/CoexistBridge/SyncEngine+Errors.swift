import CoexistLegacyStore
import CoexistSQLite
import CoexistStore

/// How the bridge tells errors apart: the database's passing state (retried) and a damaged file (never).
extension SyncEngine {
    /// Whether an error is the database's passing state (busy, I/O, full) rather than the transaction's.
    public static func isTransient(_ error: any Error) -> Bool {
        let sqlite: SQLiteError? =
            switch error {
            case let error as SQLiteError: error
            case LegacyStoreError.sqlite(let error): error
            case StoreError.sqlite(let error): error
            default: nil
            }
        guard let sqlite else { return false }
        return sqlite.isBusy || [10, 13, 14].contains(sqlite.primaryCode)  // IOERR, FULL, CANTOPEN
    }

    /// Whether an error says the database file is damaged (`SQLITE_CORRUPT`, `SQLITE_NOTADB`): nothing may be
    /// mirrored from or into it, and retrying cannot help.
    public static func isCorruption(_ error: any Error) -> Bool {
        switch error {
        case let error as SQLiteError: return error.primaryCode == 11 || error.primaryCode == 26
        case LegacyStoreError.sqlite(let error), StoreError.sqlite(let error): return isCorruption(error)
        case LegacyStoreError.file(.notSQLite), LegacyStoreError.file(.truncated): return true
        default: return false
        }
    }
}
