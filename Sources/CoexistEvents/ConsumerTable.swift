public import CoexistSQLite

/// Durable named consumers: the last token each has acknowledged, in `coexist_consumer`. History a durable
/// consumer has not acknowledged is never pruned, unless the consumer has not been heard from for longer
/// than the configured expiry (then it is logged and ignored).
public enum ConsumerTable {
    static let createSQL = """
        CREATE TABLE IF NOT EXISTS coexist_consumer (
            name TEXT PRIMARY KEY,
            acked INTEGER NOT NULL,
            updated_at REAL NOT NULL
        ) STRICT
        """

    /// Creates the table when absent.
    public static func create(_ connection: Connection) throws { try connection.execute(createSQL) }

    /// The acknowledged token of `name`, nil for a new consumer.
    public static func acked(_ connection: Connection, name: String) throws -> Int64? {
        try connection.scalar("SELECT acked FROM coexist_consumer WHERE name = ?", [.text(name)]).integerValue
    }

    /// Names starting with this are coexistd's own positions (`coexist:publish:STREAM`): subscribers cannot
    /// take them, they never expire and they do not count against `max-consumers`.
    public static let reservedPrefix = "coexist:"

    /// Subscribers' consumers heard from since `since` (seconds since 2001; nil: all of them).
    public static func activeCount(_ connection: Connection, since: Double?) throws -> Int {
        let own = "substr(name, 1, \(reservedPrefix.utf8.count)) != '\(reservedPrefix)'"
        let count =
            try since.map {
                try connection.scalar(
                    "SELECT count(*) FROM coexist_consumer WHERE updated_at >= ? AND \(own)",
                    [.real($0)]
                )
            } ?? connection.scalar("SELECT count(*) FROM coexist_consumer WHERE \(own)")
        return Int(count.integerValue ?? 0)
    }

    /// Records `token` as acknowledged by `name` (never moving backwards).
    public static func ack(_ connection: Connection, name: String, token: Int64, now: Double) throws {
        try connection.run(
            """
            INSERT INTO coexist_consumer (name, acked, updated_at) VALUES (?1, ?2, ?3)
            ON CONFLICT (name) DO UPDATE SET acked = max(acked, ?2), updated_at = ?3
            """,
            [.text(name), .integer(token), .real(now)]
        )
    }

    /// The lowest token any consumer heard from since `since` (seconds since 2001) still needs; nil when
    /// there is none. Consumers quiet for longer are returned in `expired`.
    public static func lowestNeeded(
        _ connection: Connection,
        activeSince since: Double?
    ) throws -> (token: Int64?, expired: [String]) {
        var lowest: Int64?
        var expired: [String] = []
        for row in try connection.rows("SELECT name, acked, updated_at FROM coexist_consumer") {
            let acked = row[1].integerValue ?? 0
            // coexistd's own positions (the JetStream publisher's) never expire: it is there whenever the
            // daemon runs, however long the servers are away.
            if let since, (row[2].numericValue ?? 0) < since, !(row[0].textValue ?? "").hasPrefix(reservedPrefix) {
                expired.append(row[0].textValue ?? "")
                continue
            }
            lowest = min(lowest ?? acked, acked)
        }
        return (lowest, expired)
    }

    /// One durable consumer as the table records it.
    public struct Consumer: Sendable, Hashable, Codable {
        /// The name it subscribes with.
        public var name: String
        /// The last token it acknowledged: it resumes after it.
        public var acked: Int64
        /// When it last acknowledged or subscribed, seconds since 2001.
        public var updatedAt: Double
    }

    /// Every durable consumer, by name; empty when the table does not exist.
    public static func list(_ connection: Connection) throws -> [Consumer] {
        guard try connection.tableExists("coexist_consumer") else { return [] }
        return try connection.rows("SELECT name, acked, updated_at FROM coexist_consumer ORDER BY name").map {
            Consumer(name: $0[0].textValue ?? "", acked: $0[1].integerValue ?? 0, updatedAt: $0[2].numericValue ?? 0)
        }
    }

    /// Sets `name`'s acknowledged token to `token` (backwards too: the consumer is sent again what follows
    /// it); returns false when there is no such consumer.
    public static func reset(_ connection: Connection, name: String, token: Int64, now: Double) throws -> Bool {
        guard try connection.tableExists("coexist_consumer") else { return false }
        try connection.run(
            "UPDATE coexist_consumer SET acked = ?2, updated_at = ?3 WHERE name = ?1",
            [.text(name), .integer(token), .real(now)]
        )
        return connection.changes > 0
    }

    /// Forgets `name`: it no longer holds history back, and subscribing with it starts afresh. Returns
    /// false when there is no such consumer.
    public static func drop(_ connection: Connection, name: String) throws -> Bool {
        guard try connection.tableExists("coexist_consumer") else { return false }
        try connection.run("DELETE FROM coexist_consumer WHERE name = ?", [.text(name)])
        return connection.changes > 0
    }
}
