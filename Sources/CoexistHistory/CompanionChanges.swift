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
/// `tombstone` (JSON object of preserved values, deletes only, in ``AttributeValue``'s tagged form).
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
            tombstone TEXT
        ) STRICT
        """,
        "CREATE INDEX IF NOT EXISTS coexist_change_token ON coexist_change (token)",
    ]

    /// Creates the table when absent (inside the caller's transaction).
    public static func ensure(_ connection: Connection) throws {
        try connection.schemaDependent("CompanionChanges.ensure") { () throws(SQLiteError) in
            for statement in createStatements { try connection.execute(statement) }
        }
    }

    /// One change to record.
    public struct Entry: Sendable, Hashable {
        public var type: ChangeType
        public var entity: String
        public var objectID: String
        public var properties: [String]
        public var tombstone: [String: AttributeValue]

        /// Creates an entry.
        public init(
            type: ChangeType,
            entity: String,
            objectID: String,
            properties: [String] = [],
            tombstone: [String: AttributeValue] = [:]
        ) {
            self.type = type
            self.entity = entity
            self.objectID = objectID
            self.properties = properties
            self.tombstone = tombstone
        }
    }

    /// Writes `entries` for transaction `token`; returns them as history changes with their ids.
    public static func write(_ entries: [Entry], token: Int64, connection: Connection) throws -> [HistoryChange] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var changes: [HistoryChange] = []
        for entry in entries {
            let properties: SQLiteValue =
                entry.type == .update
                ? .text(String(decoding: try encoder.encode(entry.properties), as: UTF8.self)) : .null
            let tombstone: SQLiteValue =
                entry.type == .delete
                ? .text(String(decoding: try encoder.encode(entry.tombstone), as: UTF8.self)) : .null
            try connection.run(
                "INSERT INTO coexist_change (token, type, entity, object_id, properties, tombstone) VALUES (?, ?, ?, ?, ?, ?)",
                [
                    .integer(token), .integer(Int64(entry.type.rawValue)), .text(entry.entity), .text(entry.objectID),
                    properties, tombstone,
                ]
            )
            changes.append(
                HistoryChange(
                    changeID: connection.lastInsertRowID,
                    side: .new,
                    type: entry.type,
                    entity: entry.entity,
                    objectID: entry.objectID,
                    properties: entry.type == .update ? entry.properties : nil,
                    tombstone: entry.tombstone
                )
            )
        }
        return changes
    }

    /// Decodes one `coexist_change` row selected as `id, token, type, entity, object_id, properties, tombstone`.
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
            tombstone: tombstone ?? [:]
        )
    }
}
