public import CoexistSQLite

/// What a store's history holds, counted in SQL (`coexistctl history stats`): totals, the token and time
/// range, transactions and changes per author, per entity and type, per day, and the bytes of the history
/// tables with their indexes (from `dbstat`, when SQLite was built with it).
public struct HistoryStatistics: Sendable, Encodable {
    /// Transactions (`ATRANSACTION` rows), both sides.
    public var transactions: Int
    /// Changes: `ACHANGE` rows plus `coexist_change` rows.
    public var changes: Int
    /// The oldest and newest token; nil for an empty history.
    public var firstToken: Int64?
    public var lastToken: Int64?
    /// The oldest and newest transaction time, seconds since 2001.
    public var firstTime: Double?
    public var lastTime: Double?
    /// Per author (nil: none set), most transactions first.
    public var authors: [Author]
    /// Per side, entity and change type, by count.
    public var entities: [EntityChanges]
    /// Per UTC day, oldest first: the last `days` days that have transactions.
    public var days: [Day]
    /// Bytes of each history table and index; nil when `dbstat` is not available.
    public var bytes: [String: Int]?

    /// One author's share.
    public struct Author: Sendable, Encodable {
        public var author: String?
        public var transactions: Int
        public var changes: Int
    }

    /// Changes of one entity and type on one side.
    public struct EntityChanges: Sendable, Encodable {
        public var side: Side
        /// The entity's name, or `#N` for a legacy entity number `names` does not know.
        public var entity: String
        public var type: ChangeType
        public var changes: Int

        enum CodingKeys: String, CodingKey { case side, entity, type, changes }

        /// The type as its name (`insert`, `update`, `delete`), as everywhere else in coexist's JSON.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(side, forKey: .side)
            try container.encode(entity, forKey: .entity)
            try container.encode(type.description, forKey: .type)
            try container.encode(changes, forKey: .changes)
        }
    }

    /// One day's growth.
    public struct Day: Sendable, Encodable {
        /// `YYYY-MM-DD`, UTC.
        public var day: String
        public var transactions: Int
        public var changes: Int
    }

    /// Counts the history of `connection`'s database; `names` maps legacy entity numbers to names.
    public init(_ connection: Connection, names: [Int: String], days: Int = 30) throws {
        let companion = try connection.tableExists("coexist_change")
        func count(_ sql: String) throws -> Int { Int(try connection.scalar(sql).integerValue ?? 0) }
        transactions = try count("SELECT count(*) FROM ATRANSACTION")
        changes =
            try count("SELECT count(*) FROM ACHANGE") + (companion ? count("SELECT count(*) FROM coexist_change") : 0)
        let range = try connection.rows(
            "SELECT min(Z_PK), max(Z_PK), min(ZTIMESTAMP), max(ZTIMESTAMP) FROM ATRANSACTION"
        )
        firstToken = range.first?[0].integerValue
        lastToken = range.first?[1].integerValue
        firstTime = range.first?[2].numericValue
        lastTime = range.first?[3].numericValue
        // Changes per transaction, both sides, as a subquery each grouping reuses.
        let perTransaction =
            "SELECT ZTRANSACTIONID AS token, count(*) AS n FROM ACHANGE GROUP BY ZTRANSACTIONID"
            + (companion ? " UNION ALL SELECT token, count(*) FROM coexist_change GROUP BY token" : "")
        authors = try connection.rows(
            """
            SELECT coalesce(a.ZNAME, t.ZAUTHOR), count(DISTINCT t.Z_PK), coalesce(sum(c.n), 0)
            FROM ATRANSACTION t LEFT JOIN ATRANSACTIONSTRING a ON a.Z_PK = t.ZAUTHORTS
            LEFT JOIN (\(perTransaction)) c ON c.token = t.Z_PK
            GROUP BY 1 ORDER BY 2 DESC, 1
            """
        ).map { Author(author: $0[0].textValue, transactions: Self.int($0[1]), changes: Self.int($0[2])) }
        var entities = try connection.rows(
            "SELECT ZENTITY, ZCHANGETYPE, count(*) FROM ACHANGE GROUP BY 1, 2"
        ).map { row in
            let number = Int(row[0].integerValue ?? -1)
            return EntityChanges(
                side: .legacy,
                entity: names[number] ?? "#\(number)",
                type: ChangeType(rawValue: Int(row[1].integerValue ?? -1)) ?? .update,
                changes: Self.int(row[2])
            )
        }
        if companion {
            entities += try connection.rows("SELECT entity, type, count(*) FROM coexist_change GROUP BY 1, 2").map {
                EntityChanges(
                    side: .new,
                    entity: $0[0].textValue ?? "?",
                    type: ChangeType(rawValue: Int($0[1].integerValue ?? -1)) ?? .update,
                    changes: Self.int($0[2])
                )
            }
        }
        self.entities = entities.sorted { ($0.changes, $1.entity) > ($1.changes, $0.entity) }
        self.days = try connection.rows(
            """
            SELECT * FROM (
              SELECT date(t.ZTIMESTAMP + 978307200, 'unixepoch') AS day, count(DISTINCT t.Z_PK), coalesce(sum(c.n), 0)
              FROM ATRANSACTION t LEFT JOIN (\(perTransaction)) c ON c.token = t.Z_PK
              GROUP BY day ORDER BY day DESC LIMIT ?
            ) ORDER BY day
            """,
            [.integer(Int64(max(0, days)))]
        ).map { Day(day: $0[0].textValue ?? "?", transactions: Self.int($0[1]), changes: Self.int($0[2])) }
        bytes = try Self.bytes(connection, companion: companion)
    }

    private static func int(_ value: SQLiteValue) -> Int { Int(value.integerValue ?? 0) }

    /// Bytes per history table and index through `dbstat`; nil without it.
    private static func bytes(_ connection: Connection, companion: Bool) throws -> [String: Int]? {
        let tables = ["ATRANSACTION", "ACHANGE", "ATRANSACTIONSTRING"] + (companion ? ["coexist_change"] : [])
        let list = tables.map { "'\($0)'" }.joined(separator: ", ")
        do {
            var result: [String: Int] = [:]
            for row in try connection.rows(
                """
                SELECT s.name, sum(s.pgsize) FROM dbstat s JOIN sqlite_master m ON m.name = s.name
                WHERE m.tbl_name IN (\(list)) GROUP BY s.name
                """
            ) {
                result[row[0].textValue ?? "?"] = int(row[1])
            }
            return result
        } catch {
            return nil  // no dbstat in this SQLite
        }
    }
}
