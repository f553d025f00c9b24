internal import CSQLite

#if canImport(Glibc)
internal import Glibc
#endif

/// One SQLite connection: the single owner of a `sqlite3*` handle and of its prepared statements.
///
/// A connection is not `Sendable`: confine it to one task, thread or actor. Opening applies
/// ``OpenOptions`` (WAL, `synchronous=NORMAL`, foreign keys, a busy handler with backoff, Core Data's trigger
/// functions). Closing happens in `deinit` with `sqlite3_close_v2`, which waits for outstanding statements.
public final class Connection {
    /// The database file path as given to ``init(path:options:)``.
    public let path: String
    /// The options the connection was opened with.
    public let options: OpenOptions
    /// A read-only connection opened read-write with `PRAGMA query_only` (see ``init(path:options:)``).
    let queryOnly: Bool

    /// Runs `body`, which writes only this connection's TEMP tables, with `query_only` lifted for its
    /// duration on a connection that has it (SQLite's `query_only` refuses TEMP writes too); the main
    /// database stays as untouched as the body leaves it.
    public func writingTemporaryTables<T>(_ body: () throws -> T) throws -> T {
        guard queryOnly else { return try body() }
        try execute("PRAGMA query_only=OFF")
        let result: T
        do {
            result = try body()
        } catch {
            try execute("PRAGMA query_only=ON")
            throw error
        }
        try execute("PRAGMA query_only=ON")
        return result
    }
    let handle: OpaquePointer
    let busyState: BusyHandlerState
    /// See ``manageCheckpoints()``.
    let walState = WALHookState()
    private var statementCache: [String: Statement] = [:]
    /// See ``schemaDependent(_:_:)``.
    var schemaMemo: [String: (version: Int64, value: Any)] = [:]
    /// `CLOCK_MONOTONIC` nanoseconds when this connection's last `COMMIT` (through ``write(_:)``) returned;
    /// 0 before any. A latency measured from a commit starts here, not after the caller's own work.
    public internal(set) var lastCommitTime: Int64 = 0
    /// Inside ``write(_:)``, ``read(_:)`` or ``insideTransaction(_:)``: their transaction must still be open.
    var inTransactionBlock = false

    /// Opens (or creates) the database at `path`.
    ///
    /// Throws ``SQLiteError`` when the file cannot be opened, is not a database (`SQLITE_NOTADB`, detected by
    /// reading the schema at once), or a pragma fails.
    public init(path: String, options: OpenOptions = OpenOptions()) throws(SQLiteError) {
        self.path = path
        self.options = options
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        // A read-only connection to a WAL database leaves a `-wal` and `-shm` behind when there were none.
        // With no `-wal` beside the file, it opens read-write with `query_only` instead (SQLite refuses every
        // write), so that closing as the last connection removes the empty WAL it made: the folder is left
        // as it was found.
        queryOnly = options.access == .readOnly && access(path + "-wal", F_OK) != 0 && access(path, W_OK) == 0
        switch options.access {
        case .readOnly where queryOnly: flags |= SQLITE_OPEN_READWRITE
        case .readOnly: flags |= SQLITE_OPEN_READONLY
        case .readWrite: flags |= SQLITE_OPEN_READWRITE
        case .readWriteCreate: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        }
        var db: OpaquePointer?
        let code = sqlite3_open_v2(path, &db, flags, CoalescingVFS.name)
        guard code == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            let extended = db.map { sqlite3_extended_errcode($0) } ?? code
            sqlite3_close_v2(db)
            throw SQLiteError(extendedCode: extended, message: message, path: path)
        }
        handle = db
        busyState = BusyHandlerState(timeoutMilliseconds: options.busyTimeoutMilliseconds)
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_handler(db, busyHandlerCallback, Unmanaged.passUnretained(busyState).toOpaque())
        try configure()
    }

    deinit {
        statementCache.removeAll()
        sqlite3_close_v2(handle)
    }

    private func configure() throws(SQLiteError) {
        if queryOnly { try execute("PRAGMA query_only=ON") }
        // Reading the schema now turns "file is not a database" into an open-time error.
        try execute("SELECT count(*) FROM sqlite_master")
        if options.access != .readOnly {
            if options.walMode {
                let mode = try scalar("PRAGMA journal_mode=WAL").textValue?.lowercased()
                if mode != "wal" {
                    throw error(SQLITE_ERROR, "could not switch to WAL mode (journal_mode is \(mode ?? "unknown"))")
                }
            }
            if options.synchronousNormal { try execute("PRAGMA synchronous=NORMAL") }
        }
        try execute(options.foreignKeys ? "PRAGMA foreign_keys=ON" : "PRAGMA foreign_keys=OFF")
        // Sorts and temporary b-trees stay in memory: otherwise each such statement creates, opens and
        // deletes a file in /var/tmp (measured: one per bridge pass).
        try execute(options.temporariesInMemory ? "PRAGMA temp_store=MEMORY" : "PRAGMA temp_store=FILE")
        if let kilobytes = options.cacheKilobytes { try execute("PRAGMA cache_size=-\(max(1, kilobytes))") }
        if options.coreDataTriggerFunctions { try registerCoreDataTriggerFunctions() }
    }

    /// Runs one or more SQL statements that take no arguments and return no rows of interest.
    public func execute(_ sql: String) throws(SQLiteError) {
        try checkTransactionStillOpen(sql: sql)
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        if code != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(message)
            throw SQLiteError(extendedCode: sqlite3_extended_errcode(handle), message: text, sql: sql, path: path)
        }
    }

    /// Prepares a statement that the caller owns (not cached).
    public func prepare(_ sql: String) throws(SQLiteError) -> Statement {
        try Statement(connection: self, sql: sql)
    }

    /// Returns a prepared statement for `sql` from the connection's cache, reset and with bindings cleared;
    /// a new one, not kept, while the cached one is in use (the body of a ``forEachRow(_:_:_:)`` running the
    /// same query: resetting it would restart the outer one).
    public func cachedStatement(_ sql: String) throws(SQLiteError) -> Statement {
        if let statement = statementCache[sql] {
            if statement.isRunning { return try Statement(connection: self, sql: sql) }
            statement.reset()
            return statement
        }
        let statement = try Statement(connection: self, sql: sql)
        statementCache[sql] = statement
        return statement
    }

    /// Runs a cached statement with `arguments` to completion, ignoring any rows.
    public func run(_ sql: String, _ arguments: [SQLiteValue] = []) throws(SQLiteError) {
        let statement = try cachedStatement(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        while try statement.step() {}
    }

    /// Runs a cached query and calls `body` for each row, in order.
    public func forEachRow(
        _ sql: String,
        _ arguments: [SQLiteValue] = [],
        _ body: (Row) throws -> Void
    ) throws {
        let statement = try cachedStatement(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        while try statement.step() { try body(Row(statement: statement)) }
    }

    /// Runs a cached query and returns every row as an array of values.
    public func rows(_ sql: String, _ arguments: [SQLiteValue] = []) throws(SQLiteError) -> [[SQLiteValue]] {
        let statement = try cachedStatement(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        var result: [[SQLiteValue]] = []
        while try statement.step() { result.append(Row(statement: statement).values) }
        return result
    }

    /// Runs a cached query and returns the first column of the first row, or `.null` when there is no row.
    public func scalar(_ sql: String, _ arguments: [SQLiteValue] = []) throws(SQLiteError) -> SQLiteValue {
        let statement = try cachedStatement(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        return try statement.step() ? Row(statement: statement)[0] : .null
    }

    /// The rowid of the last successful INSERT on this connection.
    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// The number of rows changed by the last INSERT, UPDATE or DELETE.
    public var changes: Int { Int(sqlite3_changes64(handle)) }

    /// True when no transaction is open.
    public var isAutocommit: Bool { sqlite3_get_autocommit(handle) != 0 }

    /// Whether the open transaction holds deferred foreign-key violations, which would make its COMMIT fail
    /// (`SQLITE_DBSTATUS_DEFERRED_FKS`).
    public var hasDeferredForeignKeyViolations: Bool {
        var current: Int32 = 0
        var highest: Int32 = 0
        return sqlite3_db_status(handle, SQLITE_DBSTATUS_DEFERRED_FKS, &current, &highest, 0) == SQLITE_OK
            && current > 0
    }

    /// The value of `PRAGMA data_version`: it changes when another connection commits
    /// (https://www.sqlite.org/pragma.html#pragma_data_version).
    public func dataVersion() throws(SQLiteError) -> Int64 {
        try scalar("PRAGMA data_version").integerValue ?? 0
    }

    /// ``dataVersion()`` read again for up to about 200 µs while it still equals `last`, when
    /// `waitForCommit` (a file watch fires on the WAL's write, a few microseconds before the commit is
    /// visible: a commit's frames are one write, ``CoalescingVFS``); nil when it cannot be read. The first
    /// tries only yield the processor, the later ones sleep 20 µs.
    public func visibleDataVersion(after last: Int64?, waitForCommit: Bool) -> Int64? {
        do {
            var version = try dataVersion()
            var retries = 0
            while waitForCommit && version == last && retries < 14 {
                if retries < 4 { sched_yield() } else { usleep(20) }
                version = try dataVersion()
                retries += 1
            }
            return version
        } catch {
            return nil
        }
    }

    /// Whether a table (or view) named `name` exists in the main schema.
    public func tableExists(_ name: String) throws(SQLiteError) -> Bool {
        try scalar("SELECT 1 FROM sqlite_master WHERE type IN ('table','view') AND name = ?", [.text(name)]) != .null
    }

    func error(_ code: Int32, _ message: String, sql: String? = nil) -> SQLiteError {
        SQLiteError(extendedCode: code, message: message, sql: sql, path: path)
    }

    func lastError(sql: String?) -> SQLiteError {
        SQLiteError(
            extendedCode: sqlite3_extended_errcode(handle),
            message: String(cString: sqlite3_errmsg(handle)),
            sql: sql,
            path: path
        )
    }
}

extension Connection {
    /// The SQLite library this process runs with (`3.40.1`).
    public static var libraryVersion: String { String(cString: sqlite3_libversion()) }

    /// Prepares SQLite for a process whose threads each run their own connections; call it at the start of
    /// `main`, before any thread uses SQLite (SQLite's configuration is not thread-safe).
    ///
    /// It turns SQLite's memory statistics off. With them on (SQLite's default), every allocation and free
    /// of every connection takes one process-wide mutex: a thread that allocates while another runs a
    /// transaction waits for that mutex again and again, measured as a reader's whole read waiting out the
    /// other thread's write. Nothing in this project reads the statistics (`sqlite3_memory_used`, the soft
    /// heap limit).
    ///
    /// It also keeps a statement journal in memory up to ``statementJournalSpill`` bytes (SQLite's default,
    /// 64 KiB, is less than the pages a one-row bridge pass changes under its savepoints: each pass created,
    /// wrote and deleted a file in /var/tmp). A connection that keeps temporaries in files
    /// (``OpenOptions/temporariesInMemory`` false) still spills a large pass's journal. Returns false,
    /// changing nothing, when SQLite was already initialized in this process.
    @discardableResult
    public static func prepareLibraryForThreads() -> Bool {
        coexist_sqlite_disable_memory_statistics() == SQLITE_OK
            && coexist_sqlite_statement_journal_spill(statementJournalSpill) == SQLITE_OK
    }

    /// How large a statement journal grows in memory before it goes to a temporary file: 128 KiB, enough for
    /// a one-row bridge pass. No more: with any threshold above 128 KiB, SQLite 3.40.1 fails a savepoint's
    /// large writes with SQLITE_FULL ("database or disk is full") once the journal spills (measured with
    /// the library alone: 20,000-row updates in a savepoint, WAL mode, `temp_store=FILE`). The likely cause:
    /// the `unix` VFS writes fewer than 128 KiB per call (see ``CoalescingVFS/capacity``), and a spilling
    /// journal writes its memory in chunks of the threshold's size.
    public static let statementJournalSpill: Int32 = 128 << 10
}
