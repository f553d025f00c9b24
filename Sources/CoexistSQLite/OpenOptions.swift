/// How a ``Connection`` opens its database file.
public struct OpenOptions: Sendable, Equatable {
    /// Whether the connection may write, and whether a missing file is created.
    public enum Access: Sendable, Equatable {
        /// `SQLITE_OPEN_READONLY`: no journal-mode change, no writes.
        case readOnly
        /// `SQLITE_OPEN_READWRITE`: the file must exist.
        case readWrite
        /// `SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE`.
        case readWriteCreate
    }

    /// Read-only, read-write, or read-write-create.
    public var access: Access
    /// Put the file in WAL mode on open (ignored for read-only connections). Default true.
    public var walMode: Bool
    /// Set `PRAGMA synchronous=NORMAL` (Debian's build defaults WAL databases to FULL). Default true.
    public var synchronousNormal: Bool
    /// Enforce `FOREIGN KEY` clauses (`PRAGMA foreign_keys=ON`): for coexist's own tables. Core Data's tables
    /// declare no foreign keys, so this never changes how they behave. Default true.
    public var foreignKeys: Bool
    /// How long a blocked statement keeps retrying, with backoff, before it fails with `SQLITE_BUSY`.
    public var busyTimeoutMilliseconds: Int
    /// Register Core Data's derived-attribute trigger functions as no-ops (coredata-sqlite-format.md §1.5).
    /// Default true: any connection that may write a Core Data store needs them.
    public var coreDataTriggerFunctions: Bool
    /// The connection's page cache in KiB (`PRAGMA cache_size=-N`); nil keeps SQLite's default (2,000 KiB).
    public var cacheKilobytes: Int?
    /// Keep temporary tables and the statement journal in memory (`PRAGMA temp_store=MEMORY`), else in
    /// unlinked temporary files. A connection whose write transactions run savepoints over thousands of rows
    /// (the bridge's passes) keeps, in the statement journal, a copy of every page they change until the
    /// savepoint ends: measured, 24 MiB more resident memory during a catch-up in memory. Default true.
    public var temporariesInMemory: Bool

    /// Creates options; the defaults suit a connection that reads and writes a shared WAL database.
    public init(
        access: Access = .readWrite,
        walMode: Bool = true,
        synchronousNormal: Bool = true,
        foreignKeys: Bool = true,
        busyTimeoutMilliseconds: Int = 5_000,
        coreDataTriggerFunctions: Bool = true,
        cacheKilobytes: Int? = nil,
        temporariesInMemory: Bool = true
    ) {
        self.access = access
        self.walMode = walMode
        self.synchronousNormal = synchronousNormal
        self.foreignKeys = foreignKeys
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        self.coreDataTriggerFunctions = coreDataTriggerFunctions
        self.cacheKilobytes = cacheKilobytes
        self.temporariesInMemory = temporariesInMemory
    }

    /// Options for reading only: no WAL switch, no trigger functions.
    public static let readOnly = OpenOptions(access: .readOnly, coreDataTriggerFunctions: false)
}
