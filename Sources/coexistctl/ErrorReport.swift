import CoexistBridge
import CoexistLegacyStore
import CoexistModel
import CoexistRuntime
import CoexistSQLite
import CoexistStore

/// Maps library errors to one message line and a sysexits code.
struct ErrorReport {
    let message: String
    let exitCode: ExitCode

    init(_ error: any Error) {
        switch error {
        case let error as LegacyStoreError:
            message = error.description
            exitCode = Self.exitCode(error)
        case let error as ModelError:
            message = error.description
            exitCode = error.kind == .missingFile ? .noInput : .dataError
        case let error as SQLiteError:
            message = error.description
            exitCode = Self.exitCode(error)
        case let error as ConfigError:
            message = error.description
            exitCode = .configuration
        case let error as BridgeError:
            message = error.description
            exitCode = .dataError
        case let error as StoreError:
            message = error.description
            exitCode = .dataError
        case let error as SchemaError:
            message = error.description
            exitCode = .dataError
        case let error as DatabaseFileHeader.Problem:
            message = error.description
            exitCode = Self.exitCode(.file(error))
        default:
            message = "\(error)"
            exitCode = .software
        }
    }

    private static func exitCode(_ error: LegacyStoreError) -> ExitCode {
        switch error {
        case .file(.unreadable): .noInput
        case .file: .dataError
        case .sqlite(let error): exitCode(error)
        case .notCoreDataStore, .invalidData, .modelMismatch, .validation: .dataError
        case .conflict: .temporaryFailure
        case .model(let error): error.kind == .missingFile ? .noInput : .dataError
        }
    }

    private static func exitCode(_ error: SQLiteError) -> ExitCode {
        switch error.primaryCode {
        case 5, 6: .temporaryFailure  // SQLITE_BUSY, SQLITE_LOCKED
        case 11, 26: .dataError  // SQLITE_CORRUPT, SQLITE_NOTADB
        case 14: .noInput  // SQLITE_CANTOPEN
        case 8, 10, 13: .ioError  // SQLITE_READONLY, SQLITE_IOERR, SQLITE_FULL
        default: .software
        }
    }
}
