public import CoexistModel
public import CoexistSQLite

/// What a legacy `ACHANGE` row means under a model: the entity's name, the changed properties decoded from
/// `ZCOLUMNS`, and the tombstone decoded to named values. Supplied by the legacy store, which knows the
/// entity numbers and the model.
public protocol LegacyChangeDecoding {
    /// Decodes the parts of one `ACHANGE` row (of transaction `token`) that need the model.
    func decode(
        token: Int64,
        entityNumber: Int,
        type: ChangeType,
        columns: [UInt8]?,
        tombstones: [SQLiteValue]
    ) -> LegacyChangeDetails
}

/// The model-dependent parts of a legacy change.
public struct LegacyChangeDetails: Sendable, Hashable {
    /// The entity name, nil when the number is not an entity of the model.
    public var entity: String?
    /// Changed properties of an update; nil when the bitmap cannot be decoded.
    public var properties: [String]?
    /// Preserved values of a delete.
    public var tombstone: [String: AttributeValue]

    /// Creates details.
    public init(entity: String?, properties: [String]?, tombstone: [String: AttributeValue]) {
        self.entity = entity
        self.properties = properties
        self.tombstone = tombstone
    }
}

/// Reads the shared history: transactions after a token, each with its metadata and its changes from
/// both sides (`ACHANGE` decoded by the legacy store's decoder, `coexist_change` as recorded).
///
/// History content never makes the reader fail: unknown entity numbers and undecodable bitmaps are
/// returned as such. Only SQLite errors are thrown.
public struct HistoryReader {
    let connection: Connection
    let decoder: any LegacyChangeDecoding
    let tombstoneColumns: [String]
    let hasCompanion: Bool
    /// Whether new-schema changes come with their ``HistoryChange/recordedValues`` (decoded JSON: only
    /// for readers that use them).
    public var readsRecordedValues = false

    /// A reader over `connection`, decoding legacy changes with `decoder`. Throws when the database has no
    /// history tables.
    public init(connection: Connection, decoder: any LegacyChangeDecoding) throws {
        guard try HistoryTables.exist(connection) else {
            throw SQLiteError(
                extendedCode: 1,
                message: "no persistent-history tables (ATRANSACTION, ACHANGE)",
                path: connection.path
            )
        }
        self.connection = connection
        self.decoder = decoder
        tombstoneColumns = try HistoryTables.tombstoneColumns(connection)
        hasCompanion = try connection.tableExists("coexist_change")
    }

    /// Up to `limit` transactions with a token greater than `token` (and at most `through`), in token order.
    public func transactions(
        after token: Int64,
        through: Int64 = .max,
        limit: Int = 1_000
    ) throws
        -> [HistoryTransaction]
    {
        var filter = HistoryFilter()
        filter.since = token
        filter.until = through
        return try transactions(matching: filter, limit: limit)
    }

    /// Up to `limit` transactions that `filter` keeps, in token order; page on with `filter.since` set to
    /// the last token returned. Reads the changes of the returned transactions only, so memory stays
    /// bounded by the page however sparse the matches.
    public func transactions(matching filter: HistoryFilter, limit: Int = 1_000) throws -> [HistoryTransaction] {
        var transactions: [HistoryTransaction] = []
        let (condition, arguments) = filter.clause(hasCompanion: hasCompanion)
        try connection.forEachRow(
            """
            SELECT t.Z_PK, t.ZTIMESTAMP,
                   coalesce(a.ZNAME, t.ZAUTHOR), coalesce(b.ZNAME, t.ZBUNDLEID),
                   coalesce(c.ZNAME, t.ZCONTEXTNAME), coalesce(p.ZNAME, t.ZPROCESSID)
            FROM ATRANSACTION t
            LEFT JOIN ATRANSACTIONSTRING a ON a.Z_PK = t.ZAUTHORTS
            LEFT JOIN ATRANSACTIONSTRING b ON b.Z_PK = t.ZBUNDLEIDTS
            LEFT JOIN ATRANSACTIONSTRING c ON c.Z_PK = t.ZCONTEXTNAMETS
            LEFT JOIN ATRANSACTIONSTRING p ON p.Z_PK = t.ZPROCESSIDTS
            WHERE \(condition) ORDER BY t.Z_PK LIMIT ?
            """,
            arguments + [.integer(Int64(max(0, limit)))]
        ) { row in
            transactions.append(
                HistoryTransaction(
                    token: row[0].integerValue ?? 0,
                    timestamp: row[1].numericValue ?? 0,
                    author: row[2].textValue,
                    bundleID: row[3].textValue,
                    contextName: row[4].textValue,
                    processName: row[5].textValue
                )
            )
        }
        guard let first = transactions.first?.token, let last = transactions.last?.token else { return [] }
        // A dense page (every token of its range) reads the range; a sparse one only its own tokens.
        let dense = last - first + 1 == Int64(transactions.count)
        let tokens = dense ? "BETWEEN ?1 AND ?2" : "IN (SELECT value FROM json_each(?3))"
        let tokenArguments: [SQLiteValue] = [
            .integer(first), .integer(last),
            .text("[" + transactions.map { String($0.token) }.joined(separator: ",") + "]"),
        ]
        var changesByToken: [Int64: [HistoryChange]] = [:]
        let tombstoneList = tombstoneColumns.map { ", " + SQLIdentifier.quoted($0) }.joined()
        try connection.forEachRow(
            """
            SELECT Z_PK, ZTRANSACTIONID, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZCOLUMNS\(tombstoneList)
            FROM ACHANGE WHERE ZTRANSACTIONID \(tokens) ORDER BY Z_PK
            """,
            dense ? Array(tokenArguments.prefix(2)) : tokenArguments
        ) { row in
            changesByToken[row[1].integerValue ?? 0, default: []].append(decodeLegacy(row))
        }
        if hasCompanion {
            let values = try readsRecordedValues && CompanionChanges.recordsValues(connection) ? ", vals" : ""
            try connection.forEachRow(
                """
                SELECT id, token, type, entity, object_id, properties, tombstone\(values)
                FROM coexist_change WHERE token \(tokens) ORDER BY id
                """,
                dense ? Array(tokenArguments.prefix(2)) : tokenArguments
            ) { row in
                changesByToken[row[1].integerValue ?? 0, default: []].append(CompanionChanges.decode(row))
            }
        }
        for index in transactions.indices {
            transactions[index].changes = changesByToken[transactions[index].token] ?? []
        }
        return transactions
    }

    /// The highest token T such that the transactions in (`token`, T] hold at most `changes` changes on
    /// each side; nil when every transaction after `token` fits. T may equal `token` (not even the next
    /// transaction fits). Counts come from the change tables' token indexes, without reading the changes.
    public func lastToken(after token: Int64, withinChanges changes: Int) throws -> Int64? {
        var bound: Int64?
        let offset = SQLiteValue.integer(Int64(max(0, changes)))
        // The token of the change just past the budget: every transaction before it fits.
        if let next = try connection.scalar(
            "SELECT ZTRANSACTIONID FROM ACHANGE WHERE ZTRANSACTIONID > ? ORDER BY ZTRANSACTIONID LIMIT 1 OFFSET ?",
            [.integer(token), offset]
        ).integerValue {
            bound = next - 1
        }
        if hasCompanion,
            let next = try connection.scalar(
                "SELECT token FROM coexist_change WHERE token > ? ORDER BY token LIMIT 1 OFFSET ?",
                [.integer(token), offset]
            ).integerValue
        {
            bound = min(bound ?? .max, next - 1)
        }
        return bound
    }

    /// The transaction numbered `token`, or nil.
    public func transaction(_ token: Int64) throws -> HistoryTransaction? {
        guard token > Int64.min else { return nil }
        return try transactions(after: token - 1, limit: 1).first { $0.token == token }
    }

    /// The first token after `token`, nil when there is none.
    public func nextToken(after token: Int64) throws -> Int64? {
        try connection.scalar("SELECT min(Z_PK) FROM ATRANSACTION WHERE Z_PK > ?", [.integer(token)]).integerValue
    }

    /// The highest token, 0 for an empty history.
    public func lastToken() throws -> Int64 {
        try connection.scalar("SELECT max(Z_PK) FROM ATRANSACTION").integerValue ?? 0
    }

    private func decodeLegacy(_ row: Row) -> HistoryChange {
        let number = Int(row[3].integerValue ?? -1)
        let type = ChangeType(rawValue: Int(row[2].integerValue ?? -1)) ?? .update
        let columns = row[5].blobValue
        let tombstones = tombstoneColumns.indices.map { row[6 + $0] }
        let details = decoder.decode(
            token: row[1].integerValue ?? 0,
            entityNumber: number,
            type: type,
            columns: columns,
            tombstones: tombstones
        )
        return HistoryChange(
            changeID: row[0].integerValue ?? 0,
            side: .legacy,
            type: type,
            entityNumber: number,
            entity: details.entity,
            objectPK: row[4].integerValue ?? 0,
            properties: type == .update ? details.properties : nil,
            columns: columns,
            tombstone: details.tombstone
        )
    }
}
