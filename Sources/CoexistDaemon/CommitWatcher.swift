import CoexistRuntime
import CoexistSQLite

#if canImport(Glibc)
import Glibc
#endif

/// The daemon's one watch for commits to the shared file: one inotify watch of its directory (for the
/// database's `-wal`) and `PRAGMA data_version` on the event service's connection, which moves when any
/// other connection commits — an app's or the bridge service's. The file is in WAL mode while coexistd has
/// it open (its connections switch it, and SQLite refuses to take it out of WAL mode while another
/// connection has it open: "database is locked"), so every commit writes the `-wal`; writes to the
/// database file itself are checkpoints, which commit nothing and are not watched (a checkpoint writes
/// hundreds of pages, each a wake-up and a wait for a commit).
///
/// The event thread polls ``descriptor``; when ``withLandedCommit(_:)`` (or, for a commit still becoming
/// visible, ``commitLanded(waitForCommit:)``) says a commit landed, it publishes it to subscribers and wakes
/// the bridge service, which mirrors it (its own connection's `data_version` tells it whether the commit was
/// someone else's). Neither service watches the file itself.
final class CommitWatcher {
    private let files: DirectoryWatcher
    private let connection: Connection
    /// The data version of the last commit reported.
    private var seen: Int64 = -1

    /// Watches `database` through `connection` (the event service's).
    init(database: String, connection: Connection) throws {
        let base = database.split(separator: "/").last.map(String.init) ?? database
        files = try DirectoryWatcher(directory: Daemon.directory(of: database), names: [base + "-wal"])
        self.connection = connection
    }

    /// The descriptor to poll for readability.
    var descriptor: Int32 { files.descriptor }

    /// Reads the pending file events; true when one concerned the database or its WAL.
    func drain() -> Bool { files.drain() }

    /// What ``withLandedCommit(_:)`` found.
    enum LandedCheck: Equatable {
        /// A commit landed; the body ran and gave this.
        case handled(Bool)
        /// No commit is visible yet.
        case noneVisible
        /// The check could not be made (a transaction is open on the connection, or the version could not
        /// be read).
        case unchecked
    }

    /// Checks for a commit in a read transaction and, when one landed (the data version moved, as
    /// ``commitLanded(waitForCommit:)`` reports it), runs `body` in that same transaction: one snapshot and one
    /// taking of the WAL's read locks for the check and what `body` reads, not two.
    func withLandedCommit(_ body: () -> Bool) -> LandedCheck {
        guard connection.isAutocommit else { return .unchecked }
        var found = LandedCheck.unchecked
        do {
            try connection.read {
                let version = try connection.dataVersion()
                guard version != seen else {
                    found = .noneVisible
                    return
                }
                seen = version
                found = .handled(body())
            }
        } catch {
            // The check failed (`.unchecked`), or the read transaction's end after `body` ran (its reads
            // are done): what was found stands.
        }
        return found
    }

    /// True once for each move of the data version: a commit landed since the last true. After a file event
    /// (`waitForCommit`), the version is read again briefly while it has not moved (inotify fires on the
    /// first write to the WAL, a little before the commit becomes visible). False when it cannot be read.
    func commitLanded(waitForCommit: Bool) -> Bool {
        guard let version = connection.visibleDataVersion(after: seen, waitForCommit: waitForCommit),
            version != seen
        else { return false }
        seen = version
        return true
    }
}
