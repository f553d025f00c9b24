import CoexistBridge
import CoexistConfiguration
import CoexistHistory
import CoexistLegacyStore
import CoexistMigration
import CoexistModel
import CoexistPublish
public import CoexistRuntime
import CoexistSQLite
import CoexistStore

#if canImport(Glibc)
import Glibc
#endif

/// The one mapping from every error coexist's libraries throw to a message line and a sysexits code: both
/// executables report through it, so the same failure exits with the same code from either (the table is
/// the README's "Exit codes").
public struct ErrorReport: Sendable {
    /// One line saying what failed, on which file (and line, entity, property where there is one).
    public let message: String
    /// The process exit code for it.
    public let exitCode: ExitCode

    /// The report of `error`.
    public init(_ error: any Error) {
        switch error {
        case let error as ArgumentParser.UsageError:
            message = error.message
            exitCode = .usage
        case let error as ConfigError:
            message = error.description
            exitCode = error.kind == .missingInput ? .noInput : .configuration
        case let error as LegacyStoreError:
            message = error.description
            exitCode = Self.exitCode(error)
        case let error as ModelError:
            message = error.description
            exitCode = error.kind == .missingFile ? .noInput : .dataError
        case let error as SQLiteError:
            message = error.description
            exitCode = Self.exitCode(error)
        case let error as BridgeError:
            message = error.description
            exitCode = Self.exitCode(error)
        case let error as StoreError:
            message = error.description
            exitCode = Self.exitCode(error)
        case let error as SchemaError:
            message = error.description
            exitCode = .dataError
        case let error as DatabaseFileHeader.Problem:
            message = error.description
            exitCode = Self.exitCode(.file(error))
        case let error as DatabaseFileIdentity.Changed:
            message = error.description
            exitCode = .ioError
        case let error as DatabaseFileIdentity.Served:
            message = error.description
            exitCode = .temporaryFailure
        case let error as ServingDaemon.NotServed:
            message = error.description
            exitCode = .unavailable
        case let error as SystemError:
            message = error.description
            exitCode = Self.exitCode(error)
        case let error as SyncEngine.RepairRefused:
            message = error.description
            exitCode = .temporaryFailure
        case let error as MigrationError:
            message = error.description
            if case .rolledBack(_, _, let underlying) = error {
                exitCode = ErrorReport(underlying).exitCode
            } else {
                exitCode = Self.exitCode(error)
            }
        case let error as HistoryArchive.ImportError:
            message = error.description
            exitCode = .dataError
        case let error as PublishError:
            // The NATS servers failing after they were reached (a refused setting is a ConfigError).
            message = error.description
            exitCode = .unavailable
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
        case .notCoreDataStore, .invalidData, .validation: .dataError
        case .modelMismatch: .configuration
        case .conflict: .temporaryFailure
        case .cannotCreate: .cannotCreate
        case .model(let error): error.kind == .missingFile ? .noInput : .dataError
        }
    }

    private static func exitCode(_ error: BridgeError) -> ExitCode {
        switch error {
        case .modelMismatch: .configuration
        case .bothSidesHaveData, .unmirrorable, .sharedIdentity: .dataError
        case .notBridged: .failure
        }
    }

    private static func exitCode(_ error: MigrationError) -> ExitCode {
        switch error {
        case .unknownVersion, .badTarget, .notInferable, .customPolicy, .unsupported, .checkFailed: .dataError
        case .bridgeNotCaughtUp: .temporaryFailure
        case .injected, .rolledBack: .software
        }
    }

    private static func exitCode(_ error: StoreError) -> ExitCode {
        if case .sqlite(let error) = error { return exitCode(error) }
        return .dataError
    }

    private static func exitCode(_ error: SQLiteError) -> ExitCode {
        switch error.primaryCode {
        case 5, 6: .temporaryFailure  // SQLITE_BUSY, SQLITE_LOCKED
        case 11, 26: .dataError  // SQLITE_CORRUPT, SQLITE_NOTADB
        case 14, 23: .noInput  // SQLITE_CANTOPEN, SQLITE_AUTH
        case 8, 10, 13: .ioError  // SQLITE_READONLY, SQLITE_IOERR, SQLITE_FULL
        default: .software
        }
    }

    private static func exitCode(_ error: SystemError) -> ExitCode {
        switch (error.call, error.code) {
        // No daemon listening (or no socket at all): the service is unavailable.
        case ("connect", _): .unavailable
        // The daemon closed the connection (stopping, or it closed this client).
        case ("send", EPIPE), ("send", ECONNRESET), ("read", ECONNRESET): .unavailable
        // The socket path holds another file, or another server: the configuration names the wrong path.
        case ("bind", EEXIST), ("bind", EADDRINUSE), ("bind", EACCES), ("bind", ENOENT): .configuration
        case ("open", ENOENT), ("open", EACCES): .noInput
        case ("access", _): .permissionDenied
        // An output file that exists already or whose folder is missing or closed.
        case ("create", _): .cannotCreate
        default: .ioError
        }
    }
}
