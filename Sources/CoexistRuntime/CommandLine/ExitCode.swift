/// Process exit codes from sysexits(3), so scripts and systemd can tell failures apart.
public enum ExitCode: Int32, Sendable {
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
