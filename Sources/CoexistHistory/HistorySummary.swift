import CoexistModel
public import CoexistSQLite

/// Counts over a store's persistent history: transactions, changes by type, token and time range, authors.
public struct HistorySummary: Sendable, Equatable, Encodable {
    /// Change counts by `ZCHANGETYPE` (0 insert, 1 update, 2 delete).
    public struct Changes: Sendable, Equatable, Codable {
        public var insert: Int
        public var update: Int
        public var delete: Int

        /// Creates counts.
        public init(insert: Int, update: Int, delete: Int) {
            self.insert = insert
            self.update = update
            self.delete = delete
        }
    }

    /// `ATRANSACTION` rows.
    public var transactions: Int
    /// Changes by type: `ACHANGE` rows and, when the new schema exists, `coexist_change` rows.
    public var changes: Changes
    /// The lowest and highest transaction number (`ATRANSACTION.Z_PK`), nil when there is no transaction.
    public var firstToken: Int64?
    public var lastToken: Int64?
    /// The first and last transaction times, ISO-8601 UTC.
    public var firstTimestamp: String?
    public var lastTimestamp: String?
    /// Distinct transaction authors, sorted; transactions without an author are not listed.
    public var authors: [String]

    /// Reads the summary; the caller checks that the history tables exist.
    public static func read(_ connection: Connection) throws(SQLiteError) -> HistorySummary {
        let range = try connection.rows(
            """
            SELECT count(*), min(Z_PK), max(Z_PK),
                   (SELECT ZTIMESTAMP FROM ATRANSACTION ORDER BY Z_PK LIMIT 1),
                   (SELECT ZTIMESTAMP FROM ATRANSACTION ORDER BY Z_PK DESC LIMIT 1)
            FROM ATRANSACTION
            """
        )[0]
        var changes = Changes(insert: 0, update: 0, delete: 0)
        var countsSQL = "SELECT ZCHANGETYPE, count(*) FROM ACHANGE GROUP BY ZCHANGETYPE"
        if try connection.tableExists("coexist_change") {
            countsSQL += " UNION ALL SELECT type, count(*) FROM coexist_change GROUP BY type"
        }
        for row in try connection.rows(countsSQL) {
            let count = Int(row[1].integerValue ?? 0)
            switch row[0].integerValue {
            case 0: changes.insert += count
            case 1: changes.update += count
            case 2: changes.delete += count
            default: continue
            }
        }
        let authors = try connection.rows(
            """
            SELECT DISTINCT coalesce(s.ZNAME, t.ZAUTHOR) AS author
            FROM ATRANSACTION t LEFT JOIN ATRANSACTIONSTRING s ON s.Z_PK = t.ZAUTHORTS
            WHERE author IS NOT NULL ORDER BY author
            """
        ).compactMap { $0[0].textValue }
        return HistorySummary(
            transactions: Int(range[0].integerValue ?? 0),
            changes: changes,
            firstToken: range[1].integerValue,
            lastToken: range[2].integerValue,
            firstTimestamp: range[3].numericValue.map { ReferenceDate.iso8601(secondsSince2001: $0) },
            lastTimestamp: range[4].numericValue.map { ReferenceDate.iso8601(secondsSince2001: $0) },
            authors: authors
        )
    }
}

extension HistorySummary {
    enum CodingKeys: String, CodingKey {
        case transactions, changes, firstToken, lastToken, firstTimestamp, lastTimestamp, authors
    }

    /// Encodes every key; tokens and timestamps are null for an empty history.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(transactions, forKey: .transactions)
        try container.encode(changes, forKey: .changes)
        try container.encode(firstToken, forKey: .firstToken)
        try container.encode(lastToken, forKey: .lastToken)
        try container.encode(firstTimestamp, forKey: .firstTimestamp)
        try container.encode(lastTimestamp, forKey: .lastTimestamp)
        try container.encode(authors, forKey: .authors)
    }
}
