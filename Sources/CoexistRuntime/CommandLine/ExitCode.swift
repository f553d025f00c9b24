/// Process exit codes from sysexits(3), so scripts and systemd can tell failures apart.
public enum ExitCode: Int32, Sendable, CaseIterable {
    case success = 0
    /// A check found differences (for example `verify`), not an error.
    case failure = 1
    /// EX_USAGE: the command line was wrong.
    case usage = 64
    /// EX_DATAERR: input data was malformed (a corrupt store, a bad model).
    case dataError = 65
    /// EX_NOINPUT: an input file did not exist or was not readable.
    case noInput = 66
    /// EX_UNAVAILABLE: a service or resource is not available.
    case unavailable = 69
    /// EX_SOFTWARE: an internal error.
    case software = 70
    /// EX_CANTCREAT: an output file cannot be created.
    case cannotCreate = 73
    /// EX_IOERR: an error while doing I/O.
    case ioError = 74
    /// EX_TEMPFAIL: try again later (the database is busy).
    case temporaryFailure = 75
    /// EX_NOPERM: the process may not do what it must (write the database, say).
    case permissionDenied = 77
    /// EX_CONFIG: configuration error.
    case configuration = 78
}

extension ExitCode {
    /// What the code means, in a few words (the README's exit-code table says more).
    public var summary: String {
        switch self {
        case .success: "success"
        case .failure: "a check found differences or problems (verify, inspect --check-history, parked retry)"
        case .usage: "usage error: an unknown option, an option given twice, a missing or bad value"
        case .dataError: "bad data: not SQLite, not a Core Data store, a model that does not parse, a refused migration"
        case .noInput: "a file that does not exist or cannot be read (the database, the model)"
        case .unavailable: "no coexistd answers on the socket, or it went away"
        case .software: "internal error (a bug: please report it)"
        case .cannotCreate: "an output file exists already or cannot be created"
        case .ioError: "I/O error; the database file deleted or replaced under coexistd"
        case .temporaryFailure: "try again: the database is busy, a wait timed out, another coexistd serves the file"
        case .permissionDenied: "permission denied: the database or its folder cannot be written"
        case .configuration: "configuration error, naming file:line"
        }
    }
}
