import CoexistHistory
import CoexistModel
import CoexistSQLite

/// Writes the `ACHANGE` rows of one legacy save (§4.2): keys from `Z_PRIMARYKEY` 16001, `Z_ENT` 16001,
/// `Z_OPT` NULL, `ZCOLUMNS` for updates, `ZTOMBSTONEn` for deletes.
struct LegacyChangeWriter {
    let connection: Connection
    let keys: KeyAllocator

    /// Writes `changes` (with their raw tombstone values) for transaction `token`; returns them with keys.
    func write(_ changes: [HistoryChange], rawTombstones: [[SQLiteValue]], token: Int64) throws -> [HistoryChange] {
        var written: [HistoryChange] = []
        for (change, tombstone) in zip(changes, rawTombstones) {
            let key = try keys.allocate(entity: TransactionWriter.changeEntity, table: "ACHANGE")
            var recorded = change
            recorded.changeID = key
            written.append(recorded)
            let tombstoneColumns = tombstone.indices.map { ", ZTOMBSTONE\($0)" }.joined()
            let placeholders = tombstone.map { _ in ", ?" }.joined()
            try connection.run(
                """
                INSERT INTO ACHANGE (Z_PK, Z_ENT, Z_OPT, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID, ZCOLUMNS\(tombstoneColumns))
                VALUES (?, \(TransactionWriter.changeEntity), NULL, ?, ?, ?, ?, ?\(placeholders))
                """,
                [
                    .integer(key), .integer(Int64(change.type.rawValue)), .integer(Int64(change.entityNumber ?? 0)),
                    .integer(change.objectPK ?? 0), .integer(token), change.columns.map { .blob($0) } ?? .null,
                ] + tombstone
            )
        }
        return written
    }
}
