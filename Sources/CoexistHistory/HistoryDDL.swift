/// Core Data's persistent-history tables, verbatim as real stores hold them (coredata-sqlite-format.md §4.1).
///
/// The text, spacing included, matches `sqlite_master.sql` of stores written by Core Data, so that a store
/// we create cannot be told apart by its schema.
public enum HistoryDDL {
    /// `CREATE TABLE ACHANGE …` with `tombstones` `ZTOMBSTONEn BLOB` columns.
    public static func changeTable(tombstones: Int) -> String {
        var columns =
            "Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCHANGETYPE INTEGER, ZENTITY INTEGER, "
            + "ZENTITYPK INTEGER, ZTRANSACTIONID INTEGER, ZCOLUMNS BLOB"
        for index in 0..<max(0, tombstones) { columns += ", ZTOMBSTONE\(index) BLOB" }
        return "CREATE TABLE ACHANGE ( \(columns) )"
    }

    /// The transaction and string tables and every history index.
    public static let otherStatements = [
        "CREATE TABLE ATRANSACTION ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZAUTHORTS INTEGER, "
            + "ZBUNDLEIDTS INTEGER, ZCONTEXTNAMETS INTEGER, ZPROCESSIDTS INTEGER, ZTIMESTAMP FLOAT, ZAUTHOR VARCHAR, "
            + "ZBUNDLEID VARCHAR, ZCONTEXTNAME VARCHAR, ZPROCESSID VARCHAR, ZQUERYGEN BLOB )",
        "CREATE TABLE ATRANSACTIONSTRING ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR )",
        "CREATE INDEX ACHANGE_ZTRANSACTIONID_INDEX ON ACHANGE (ZTRANSACTIONID)",
        "CREATE INDEX ATRANSACTION_ZAUTHORTS_INDEX ON ATRANSACTION (ZAUTHORTS)",
        "CREATE INDEX ATRANSACTION_ZBUNDLEIDTS_INDEX ON ATRANSACTION (ZBUNDLEIDTS)",
        "CREATE INDEX ATRANSACTION_ZCONTEXTNAMETS_INDEX ON ATRANSACTION (ZCONTEXTNAMETS)",
        "CREATE INDEX ATRANSACTION_ZPROCESSIDTS_INDEX ON ATRANSACTION (ZPROCESSIDTS)",
        "CREATE INDEX Z_TRANSACTION_TransactionAuthorIndex ON ATRANSACTION (ZAUTHOR COLLATE BINARY ASC)",
        "CREATE INDEX Z_TRANSACTION_TransactionTimestampIndex ON ATRANSACTION (ZTIMESTAMP COLLATE BINARY ASC)",
        "CREATE UNIQUE INDEX Z_TRANSACTIONSTRING_UNIQUE_NAME ON ATRANSACTIONSTRING (ZNAME COLLATE BINARY ASC)",
    ]

    /// The `Z_PRIMARYKEY` rows of the history entities: number and name (§4.7).
    public static let primaryKeyRows: [(number: Int, name: String)] = [
        (16001, "CHANGE"), (16002, "TRANSACTION"), (16003, "TRANSACTIONSTRING"),
    ]
}
