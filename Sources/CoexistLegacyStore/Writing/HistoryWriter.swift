import CoexistModel
import CoexistSQLite

/// Writes one save's persistent history exactly as Core Data does (§4, checklist §8.6): interned strings
/// in `ATRANSACTIONSTRING`, one `ATRANSACTION`, one `ACHANGE` per object, keys from `Z_PRIMARYKEY`
/// 16001–16003, `Z_ENT` 16001–16003 and `Z_OPT` NULL, only the `…TS` string columns.
///
/// Creates the history tables (with Core Data's indexes and `Z_PRIMARYKEY` rows) when the store has none,
/// and adds `ZTOMBSTONEn` columns when the model preserves more attributes than the table has room for.
struct HistoryWriter {
    static let changeEntity = 16001
    static let transactionEntity = 16002
    static let stringEntity = 16003

    let store: LegacyStore
    let keys: KeyAllocator

    /// Ensures the history tables and enough tombstone columns exist; returns the tombstone column count.
    func prepare(model: Model) throws -> Int {
        let connection = store.connection
        let needed = model.entities.map { TombstoneLayout(entity: $0, model: model).attributes.count }.max() ?? 0
        if !store.hasHistory {
            try connection.execute(HistoryDDL.changeTable(tombstones: needed))
            for statement in HistoryDDL.otherStatements { try connection.execute(statement) }
            for row in HistoryDDL.primaryKeyRows {
                try connection.run(
                    "INSERT OR IGNORE INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, 0, 0)",
                    [.integer(Int64(row.number)), .text(row.name)]
                )
            }
        }
        var present =
            (try StoreSchema.readTables(connection))["ACHANGE"]?.filter { $0.hasPrefix("ZTOMBSTONE") }.count ?? 0
        while present < needed {
            try connection.execute("ALTER TABLE ACHANGE ADD COLUMN ZTOMBSTONE\(present) BLOB")
            present += 1
        }
        store.tables = try StoreSchema.readTables(connection)
        return present
    }

    /// Writes the transaction row and its changes; returns the transaction number and the changes with
    /// their `ACHANGE` keys.
    func write(
        _ changes: [HistoryChange],
        rawTombstones: [[SQLiteValue]],
        metadata: SaveMetadata,
        timestamp: Double
    ) throws -> (token: Int64, changes: [HistoryChange]) {
        let connection = store.connection
        let author = try intern(metadata.author)
        let bundle = try intern(metadata.bundleID)
        let context = try intern(metadata.contextName)
        let process = try intern(metadata.processName)
        let token = try keys.allocate(entity: Self.transactionEntity, table: "ATRANSACTION")
        try connection.run(
            """
            INSERT INTO ATRANSACTION (Z_PK, Z_ENT, Z_OPT, ZAUTHORTS, ZBUNDLEIDTS, ZCONTEXTNAMETS, ZPROCESSIDTS, ZTIMESTAMP)
            VALUES (?, \(Self.transactionEntity), NULL, ?, ?, ?, ?, ?)
            """,
            [.integer(token), author, bundle, context, process, .real(timestamp)]
        )
        var written: [HistoryChange] = []
        for (change, tombstone) in zip(changes, rawTombstones) {
            let key = try keys.allocate(entity: Self.changeEntity, table: "ACHANGE")
            var recorded = change
            recorded.changeID = key
            written.append(recorded)
            let tombstoneColumns = tombstone.indices.map { ", ZTOMBSTONE\($0)" }.joined()
            let placeholders = tombstone.map { _ in ", ?" }.joined()
            try connection.run(
                """
                INSERT INTO ACHANGE (Z_PK, Z_ENT, Z_OPT, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID, ZCOLUMNS\(tombstoneColumns))
                VALUES (?, \(Self.changeEntity), NULL, ?, ?, ?, ?, ?\(placeholders))
                """,
                [
                    .integer(key), .integer(Int64(change.type.rawValue)), .integer(Int64(change.entityNumber)),
                    .integer(change.objectPK), .integer(token), change.columns.map { .blob($0) } ?? .null,
                ] + tombstone
            )
        }
        return (token, written)
    }

    /// The `ATRANSACTIONSTRING` key of `text`, inserting it when new; `.null` for nil.
    private func intern(_ text: String?) throws -> SQLiteValue {
        guard let text else { return .null }
        let connection = store.connection
        let existing = try connection.scalar("SELECT Z_PK FROM ATRANSACTIONSTRING WHERE ZNAME = ?", [.text(text)])
        if existing != .null { return existing }
        let key = try keys.allocate(entity: Self.stringEntity, table: "ATRANSACTIONSTRING")
        try connection.run(
            "INSERT INTO ATRANSACTIONSTRING (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (?, \(Self.stringEntity), NULL, ?)",
            [.integer(key), .text(text)]
        )
        return .integer(key)
    }
}
