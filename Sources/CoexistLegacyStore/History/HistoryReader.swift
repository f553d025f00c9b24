import CoexistModel
import CoexistSQLite

/// Reads Core Data's persistent history: transactions after a token, each with its metadata and its
/// changes, `ZCOLUMNS` decoded to property names and tombstones to named values (§4).
///
/// Nothing in the history makes the reader fail except SQLite itself: a change for an entity number the
/// model does not know is returned with `entity == nil`, an undecodable bitmap with `properties == nil`.
public struct HistoryReader {
    let store: LegacyStore
    private var bitmaps: [Int: PropertyBitmap] = [:]
    private var tombstones: [Int: TombstoneLayout] = [:]
    private var names: [Int: String] = [:]
    private let tombstoneColumns: [String]

    /// A reader over `store`; throws when the store has no history tables.
    public init(store: LegacyStore) throws(LegacyStoreError) {
        guard store.hasHistory else {
            throw .notCoreDataStore(path: store.path, reason: "no persistent-history tables (ATRANSACTION, ACHANGE)")
        }
        self.store = store
        tombstoneColumns = (store.tables["ACHANGE"] ?? []).filter { $0.hasPrefix("ZTOMBSTONE") }
            .sorted { (Int($0.dropFirst(10)) ?? 0) < (Int($1.dropFirst(10)) ?? 0) }
        if let model = store.model, let schema = store.schema {
            for entity in model.entities {
                guard let number = schema.entities[entity.name]?.number else { continue }
                names[number] = entity.name
                bitmaps[number] = PropertyBitmap(entity: entity, model: model)
                tombstones[number] = TombstoneLayout(entity: entity, model: model)
            }
        } else {
            for row in store.primaryKeys { names[row.number] = row.name }
        }
    }

    /// Up to `limit` transactions with a token greater than `token`, in token order.
    public func transactions(after token: Int64, limit: Int = 1_000) throws -> [HistoryTransaction] {
        var transactions: [HistoryTransaction] = []
        try store.connection.forEachRow(
            """
            SELECT t.Z_PK, t.ZTIMESTAMP,
                   coalesce(a.ZNAME, t.ZAUTHOR), coalesce(b.ZNAME, t.ZBUNDLEID),
                   coalesce(c.ZNAME, t.ZCONTEXTNAME), coalesce(p.ZNAME, t.ZPROCESSID)
            FROM ATRANSACTION t
            LEFT JOIN ATRANSACTIONSTRING a ON a.Z_PK = t.ZAUTHORTS
            LEFT JOIN ATRANSACTIONSTRING b ON b.Z_PK = t.ZBUNDLEIDTS
            LEFT JOIN ATRANSACTIONSTRING c ON c.Z_PK = t.ZCONTEXTNAMETS
            LEFT JOIN ATRANSACTIONSTRING p ON p.Z_PK = t.ZPROCESSIDTS
            WHERE t.Z_PK > ? ORDER BY t.Z_PK LIMIT ?
            """,
            [.integer(token), .integer(Int64(max(0, limit)))]
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
        var changesByToken: [Int64: [HistoryChange]] = [:]
        let tombstoneList = tombstoneColumns.map { ", " + SQLIdentifier.quoted($0) }.joined()
        try store.connection.forEachRow(
            """
            SELECT Z_PK, ZTRANSACTIONID, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZCOLUMNS\(tombstoneList)
            FROM ACHANGE WHERE ZTRANSACTIONID BETWEEN ? AND ? ORDER BY Z_PK
            """,
            [.integer(first), .integer(last)]
        ) { row in
            changesByToken[row[1].integerValue ?? 0, default: []].append(decodeChange(row))
        }
        for index in transactions.indices {
            transactions[index].changes = changesByToken[transactions[index].token] ?? []
        }
        return transactions
    }

    /// The transaction numbered `token`, or nil.
    public func transaction(_ token: Int64) throws -> HistoryTransaction? {
        try transactions(after: token - 1, limit: 1).first { $0.token == token }
    }

    /// A stored value kept as it is when it does not fit the attribute's type.
    static func untyped(_ value: SQLiteValue) -> AttributeValue {
        switch value {
        case .null: .null
        case .integer(let number): .integer(number)
        case .real(let number): .double(number)
        case .text(let text): .string(text)
        case .blob(let bytes): .binary(bytes)
        }
    }

    private func decodeChange(_ row: Row) -> HistoryChange {
        let number = Int(row[3].integerValue ?? -1)
        let type = ChangeType(rawValue: Int(row[2].integerValue ?? -1)) ?? .update
        var change = HistoryChange(
            changeID: row[0].integerValue ?? 0,
            type: type,
            entityNumber: number,
            entity: names[number],
            objectPK: row[4].integerValue ?? 0,
            columns: row[5].blobValue
        )
        if type == .update, let bytes = row[5].blobValue {
            change.properties = bitmaps[number]?.decode(bytes)
        }
        if type == .delete, let layout = tombstones[number] {
            for (index, attribute) in layout.attributes.enumerated() where index < tombstoneColumns.count {
                let stored = row[6 + index]
                change.tombstone[attribute.name] =
                    (try? AttributeCodec.decode(stored, as: attribute)) ?? Self.untyped(stored)
            }
        }
        return change
    }
}
