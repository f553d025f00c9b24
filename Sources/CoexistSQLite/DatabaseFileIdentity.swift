#if canImport(Glibc)
internal import Glibc
#endif

/// Watches the database file a long-running process serves: notices when the file at the path is deleted or
/// replaced (SQLite would go on with the old inode, and every commit made to the new file would go unseen),
/// when its WAL goes, and when its header says it was truncated or overwritten.
///
/// It keeps one read-only descriptor of the file for its whole life, opened before any SQLite connection of
/// the process: closing a descriptor of a file drops every POSIX lock the process holds on it (SQLite's
/// too), so the file is never opened and closed again while connections exist. Create it before the first
/// connection and keep it until the process exits.
public final class DatabaseFileIdentity: @unchecked Sendable {
    /// A file at the path is no longer the one that was opened.
    public struct Changed: Error, Sendable, Equatable, CustomStringConvertible {
        /// The path.
        public var path: String
        /// What happened: `deleted` or `replaced`.
        public var what: String

        /// Creates the error for `path`, which was `what` (`deleted`, `replaced`).
        public init(path: String, what: String) {
            self.path = path
            self.what = what
        }

        public var description: String {
            "\(path) was \(what) while coexistd had it open: stopping, so that a restart opens the file now at "
                + "the path (nothing is mirrored into the old one)"
        }
    }

    /// Another process already serves the file (it holds the exclusive lock).
    public struct Served: Error, Sendable, Equatable, CustomStringConvertible {
        /// The database path.
        public var path: String
        /// The process holding the lock, when the kernel says (`/proc/locks`).
        public var holder: Int32?

        /// Creates the error for `path`, served by `holder`.
        public init(path: String, holder: Int32?) {
            self.path = path
            self.holder = holder
        }

        public var description: String {
            "another coexistd (\(holder.map { "pid \($0)" } ?? "pid unknown")) serves \(path): one daemon per file"
        }
    }

    /// The database path.
    public let path: String
    private let descriptor: Int32
    private let database: FileID
    /// The WAL's identity once it has been seen (the WAL is created by the first connection that uses it).
    private var wal: FileID?

    struct FileID: Sendable, Equatable {
        var device: UInt64
        var inode: UInt64
    }

    /// Opens the file at `path` (read-only) and records which file it is.
    public init(path: String) throws(DatabaseFileHeader.Problem) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        var info = stat()
        guard descriptor >= 0, fstat(descriptor, &info) == 0 else {
            let reason = String(cString: strerror(errno))
            if descriptor >= 0 { close(descriptor) }
            throw .unreadable(path: path, reason: reason)
        }
        self.path = path
        self.descriptor = descriptor
        database = FileID(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    deinit { close(descriptor) }

    /// Throws ``Changed`` when the database (or a WAL already seen) was deleted or replaced since.
    public func check() throws(Changed) {
        guard let now = Self.id(path) else { throw Changed(path: path, what: "deleted") }
        guard now == database else { throw Changed(path: path, what: "replaced") }
        let walNow = Self.id(path + "-wal")
        guard let wal else {
            self.wal = walNow
            return
        }
        // The WAL stays while any connection has the database open (this process has), so it may not go.
        guard let walNow else { throw Changed(path: path + "-wal", what: "deleted") }
        guard walNow == wal else { throw Changed(path: path + "-wal", what: "replaced") }
    }

    /// Takes the exclusive lock that says this process serves the file: `flock(2)` on the kept descriptor,
    /// so the lock belongs to the file itself (a copy or a new file at the path is another file), lasts as
    /// long as the process, and goes with it however it ends. `flock` locks are independent of the POSIX
    /// locks SQLite takes, so no connection, here or in an app, is affected. Throws ``Served`` naming the
    /// holder when another process has it.
    public func serveExclusively() throws(Served) {
        guard flock(descriptor, LOCK_EX | LOCK_NB) != 0 else { return }
        throw Served(path: path, holder: lockHolder())
    }

    /// The process serving the file (holding the lock ``serveExclusively()`` takes), nil when none does.
    public func server() -> Int32? {
        guard flock(descriptor, LOCK_SH | LOCK_NB) != 0 else {
            flock(descriptor, LOCK_UN)
            return nil
        }
        return lockHolder()
    }

    /// The pid holding a `flock` on this file, from `/proc/locks` (`FLOCK ADVISORY WRITE pid MAJ:MIN:INODE`,
    /// the device numbers in hex).
    private func lockHolder() -> Int32? {
        guard let file = fopen("/proc/locks", "r") else { return nil }
        defer { fclose(file) }
        let device = UInt(database.device)
        let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~UInt(0xfff))
        let minor = (device & 0xff) | ((device >> 12) & ~UInt(0xff))
        var line = [CChar](repeating: 0, count: 512)
        while fgets(&line, Int32(line.count), file) != nil {
            let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let fields = text.split(separator: " ", omittingEmptySubsequences: true)
            // "N: FLOCK ADVISORY WRITE pid dev:inode start end"; waiting requests have "->" after "N:".
            guard fields.count >= 6, fields[1] == "FLOCK", fields[3] == "WRITE" else { continue }
            let file = fields[5].split(separator: ":")
            guard file.count == 3, let fileMajor = UInt(file[0], radix: 16), let fileMinor = UInt(file[1], radix: 16),
                fileMajor == major, fileMinor == minor, String(file[2]) == String(database.inode)
            else { continue }
            return Int32(fields[4])
        }
        return nil
    }

    /// The file's header, read through the kept descriptor (``DatabaseFileHeader/read(descriptor:path:live:)``;
    /// `live`: by a process whose connections have the file open).
    public func header(live: Bool = false) throws(DatabaseFileHeader.Problem) -> DatabaseFileHeader {
        try DatabaseFileHeader.read(descriptor: descriptor, path: path, live: live)
    }

    private static func id(_ path: String) -> FileID? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileID(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }
}
