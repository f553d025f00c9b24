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
/// The event thread polls ``descriptor``; when ``commitLanded(waitForCommit:)`` says a commit landed, it
/// publishes it to subscribers and wakes the bridge service, which mirrors it (its own connection's
/// `data_version` tells it whether the commit was someone else's). Neither service watches the file itself.
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
