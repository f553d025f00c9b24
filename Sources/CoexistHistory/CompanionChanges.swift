public import CoexistModel
public import CoexistSQLite
import FoundationEssentials

/// The new schema's change log: `coexist_change`, one row per changed object of a new-schema save, keyed
/// by the save's `ATRANSACTION` token.
///
/// New-schema saves record their transaction in `ATRANSACTION` (so there is one token sequence for both
/// sides) but no `ACHANGE` rows: a Core Data app merging history would otherwise be told about objects its
/// tables do not hold. Core Data itself writes transactions without changes, so such rows are harmless to it.
/// Columns: `id` (strictly increasing), `token`, `type` (0 insert, 1 update, 2 delete), `entity` (model
/// name), `object_id` (identity), `properties` (JSON array of changed property names, updates only),
/// `tombstone` (JSON object of preserved values, deletes only, in ``AttributeValue``'s tagged form),
/// `vals` (``RecordedValues`` as JSON, inserts and updates; NULL in rows written before the column existed,
/// which ``ensure(_:)`` adds to older files).
public enum CompanionChanges {
    /// The table's DDL.
    public static let createStatements = [
        """
        CREATE TABLE IF NOT EXISTS coexist_change (
            id INTEGER PRIMARY KEY,
            token INTEGER NOT NULL,
            type INTEGER NOT NULL CHECK (type IN (0, 1, 2)),
            entity TEXT NOT NULL,
            object_id TEXT NOT NULL,
            properties TEXT,
            tombstone TEXT,
            vals TEXT
        ) STRICT
        """,
        "CREATE INDEX IF NOT EXISTS coexist_change_token ON coexist_change (token)",
    ]

    /// Creates the table when absent, and adds `vals` to a table made before it existed (inside the
    /// caller's transaction).
    public static func ensure(_ connection: Connection) throws {
        try connection.schemaDependent("CompanionChanges.ensure") { () throws(SQLiteError) in
            for statement in createStatements { try connection.execute(statement) }
            if try !recordsValues(connection) {
                try connection.execute("ALTER TABLE coexist_change ADD COLUMN vals TEXT")
            }
        }
    }

    /// Whether the file's `coexist_change` has the `vals` column (false without the table).
    public static func recordsValues(_ connection: Connection) throws(SQLiteError) -> Bool {
        try connection.schemaDependent("CompanionChanges.recordsValues") { () throws(SQLiteError) in
            try connection.scalar(
                "SELECT count(*) FROM pragma_table_info('coexist_change') WHERE name = 'vals'"
            ).integerValue == 1
        }
    }

    /// One change to record.
    public struct Entry: Sendable, Hashable {
        public var type: ChangeType
        public var entity: String
        public var objectID: String
        public var properties: [String]
        public var tombstone: [String: AttributeValue]
        /// What an insert or update set (nil: not recorded).
        public var values: RecordedValues?

        /// Creates an entry.
        public init(
            type: ChangeType,
            entity: String,
            objectID: String,
            properties: [String] = [],
            tombstone: [String: AttributeValue] = [:],
            values: RecordedValues? = nil
        ) {
            self.type = type
            self.entity = entity
            self.objectID = objectID
            self.properties = properties
            self.tombstone = tombstone
            self.values = values
        }
    }

    /// Writes `entries` for transaction `token`; returns them as history changes with their ids.
    ///
    /// Several entries go in one `INSERT … SELECT` over a JSON array of them: their ids are then the ones
    /// after the table's largest, in order (checked; should SQLite ever pick ids otherwise, the rows are
    /// written again one at a time).
    public static func write(_ entries: [Entry], token: Int64, connection: Connection) throws -> [HistoryChange] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let texts = try entries.map { entry -> Texts in
            Texts(
                properties: entry.type == .update
                    ? String(decoding: try encoder.encode(entry.properties), as: UTF8.self) : nil,
                tombstone: entry.type == .delete
                    ? String(decoding: try encoder.encode(entry.tombstone), as: UTF8.self) : nil,
                values: entry.values?.json
            )
        }
        var ids: [Int64] = []
        if entries.count > 1 {
            ids = try writeAtOnce(entries, texts, token: token, connection: connection)
        }
        if ids.isEmpty {
            for (entry, text) in zip(entries, texts) {
                try connection.run(
                    """
                    INSERT INTO coexist_change (token, type, entity, object_id, properties, tombstone, vals)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                    [
                        .integer(token), .integer(Int64(entry.type.rawValue)), .text(entry.entity),
                        .text(entry.objectID), text.properties.map { .text($0) } ?? .null,
                        text.tombstone.map { .text($0) } ?? .null, text.values.map { .text($0) } ?? .null,
                    ]
                )
                ids.append(connection.lastInsertRowID)
            }
        }
        return zip(zip(entries, texts), ids).map { pair, id in
            let (entry, text) = pair
            return HistoryChange(
                changeID: id,
                side: .new,
                type: entry.type,
                entity: entry.entity,
                objectID: entry.objectID,
                properties: entry.type == .update ? entry.properties : nil,
                tombstone: entry.tombstone,
                recordedValuesJSON: text.values
            )
        }
    }

    /// An entry's column texts.
    private struct Texts {
        var properties: String?
        var tombstone: String?
        var values: String?
    }

    /// The set-based write; the ids of the rows, or none (and no row) when they are not consecutive.
    private static func writeAtOnce(
        _ entries: [Entry],
        _ texts: [Texts],
        token: Int64,
        connection: Connection
    ) throws -> [Int64] {
        var json = "["
        for (index, (entry, text)) in zip(entries, texts).enumerated() {
            if index > 0 { json += "," }
            json += "[\(entry.type.rawValue),\(JSONText.string(entry.entity)),\(JSONText.string(entry.objectID)),"
            json += (text.properties.map(JSONText.string) ?? "null") + ","
            json += (text.tombstone.map(JSONText.string) ?? "null") + ","
            json += (text.values.map(JSONText.string) ?? "null") + "]"
        }
        json += "]"
        let largest = try connection.scalar("SELECT max(id) FROM coexist_change").integerValue ?? 0
        try connection.run(
            """
            INSERT INTO coexist_change (token, type, entity, object_id, properties, tombstone, vals)
            SELECT ?1, value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5
            FROM json_each(?2) ORDER BY key
            """,
            [.integer(token), .text(json)]
        )
        let (last, overflow) = largest.addingReportingOverflow(Int64(entries.count))
        guard !overflow, connection.lastInsertRowID == last else {
            try connection.run("DELETE FROM coexist_change WHERE token = ?", [.integer(token)])
            return []
        }
        return (0..<Int64(entries.count)).map { largest + 1 + $0 }
    }

    /// Decodes one `coexist_change` row selected as `id, token, type, entity, object_id, properties, tombstone`
    /// and, when the table has it, `vals`.
    static func decode(_ row: Row) -> HistoryChange {
        let decoder = JSONDecoder()
        let properties = row[5].textValue.flatMap { try? decoder.decode([String].self, from: Data($0.utf8)) }
        let tombstone = row[6].textValue.flatMap {
            try? decoder.decode([String: AttributeValue].self, from: Data($0.utf8))
        }
        return HistoryChange(
            changeID: row[0].integerValue ?? 0,
            side: .new,
            type: ChangeType(rawValue: Int(row[2].integerValue ?? 1)) ?? .update,
            entity: row[3].textValue,
            objectID: row[4].textValue,
            properties: properties,
            tombstone: tombstone ?? [:],
            recordedValuesJSON: row.count > 7 ? row[7].textValue : nil
        )
    }
}
