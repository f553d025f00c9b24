public import CoexistSQLite

/// Which coexistd serves the file, so that an operator's tool finds its socket from the database alone:
/// `coexist_daemon`, one row (pid, socket path, start time) written by the daemon as it opens the file. The
/// row outlives the daemon; whether that pid still serves the file is the file's `flock`
/// (``DatabaseFileIdentity/server()``), never this row.
public enum ServingDaemon {
    /// The recorded daemon.
    public struct Record: Sendable, Equatable {
        public var pid: Int32
        public var socket: String
        /// Seconds since 2001.
        public var startedAt: Double
    }

    /// No coexistd serves the file now.
    public struct NotServed: Error, Sendable, CustomStringConvertible {
        public var path: String
        /// The last daemon recorded, if any.
        public var last: Record?

        public init(path: String, last: Record?) {
            self.path = path
            self.last = last
        }

        public var description: String {
            guard let last else { return "\(path): no coexistd has served this file" }
            return "\(path): no coexistd serves this file now (the last one was pid \(last.pid), on \(last.socket))"
        }
    }

    /// The socket of the coexistd serving the file at `path`, read without writing anything: the recorded
    /// daemon, when the process holding the file's lock is that one. Throws ``NotServed`` otherwise.
    public static func socket(ofDatabase path: String) throws -> String {
        let identity = try DatabaseFileIdentity(path: path)
        _ = try identity.header()
        let record = try last(try Connection(path: path, options: OpenOptions(access: .readOnly)))
        guard let record, let server = identity.server(), server == record.pid else {
            throw NotServed(path: path, last: record)
        }
        return record.socket
    }

    static let createSQL = """
        CREATE TABLE IF NOT EXISTS coexist_daemon (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            pid INTEGER NOT NULL,
            socket TEXT NOT NULL,
            started_at REAL NOT NULL
        ) STRICT
        """

    /// Records this process as the file's daemon, listening on `socket` (in its own write transaction).
    public static func record(_ connection: Connection, pid: Int32, socket: String, now: Double) throws {
        try connection.write {
            try connection.execute(createSQL)
            try connection.run(
                "INSERT OR REPLACE INTO coexist_daemon (id, pid, socket, started_at) VALUES (1, ?, ?, ?)",
                [.integer(Int64(pid)), .text(socket), .real(now)]
            )
        }
    }

    /// The last daemon recorded, nil when none ever served the file (reads only).
    public static func last(_ connection: Connection) throws -> Record? {
        guard try connection.tableExists("coexist_daemon") else { return nil }
        guard let row = try connection.rows("SELECT pid, socket, started_at FROM coexist_daemon WHERE id = 1").first,
            let pid = row[0].integerValue.flatMap(Int32.init(exactly:)), let socket = row[1].textValue
        else { return nil }
        return Record(pid: pid, socket: socket, startedAt: row[2].numericValue ?? 0)
    }
}
