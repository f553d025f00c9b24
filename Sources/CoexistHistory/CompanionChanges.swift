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
    /// The table's DDL. `type`'s CHECK is a range, not `IN (0, 1, 2)`: SQLite 3.40 checks a list of three or
    /// more values through a temporary table made for every row written (5.3 µs a row against 2.3 µs,
    /// measured). Files made before keep their list (the same rule, checked the slower way).
    public static let createStatements = [
        """
        CREATE TABLE IF NOT EXISTS coexist_change (
            id INTEGER PRIMARY KEY,
            token INTEGER NOT NULL,
            type INTEGER NOT NULL CHECK (type BETWEEN 0 AND 2),
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
    /// One prepared statement inserts them all, a row at a time, each value bound as it is: no text is built
    /// and parsed again for them (a JSON array of rows read with `json_each` cost twice as much: each row's
    /// recorded values were parsed again for every column taken from the row; `coexist-bench throughput`
    /// under callgrind).
    public static func write(_ entries: [Entry], token: Int64, connection: Connection) throws -> [HistoryChange] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let statement = try connection.cachedStatement(
            """
            INSERT INTO coexist_change (token, type, entity, object_id, properties, tombstone, vals)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """
        )
        defer { statement.reset() }
        var changes: [HistoryChange] = []
        changes.reserveCapacity(entries.count)
        for entry in entries {
            let properties = entry.type == .update ? JSONText.strings(entry.properties) : nil
            let tombstone =
                entry.type == .delete ? String(decoding: try encoder.encode(entry.tombstone), as: UTF8.self) : nil
            let values = entry.values?.json
            statement.reset()
            try statement.bind(.integer(token), at: 1)
            try statement.bind(.integer(Int64(entry.type.rawValue)), at: 2)
            try statement.bind(.text(entry.entity), at: 3)
            try statement.bind(.text(entry.objectID), at: 4)
            try statement.bind(properties.map { .text($0) } ?? .null, at: 5)
            try statement.bind(tombstone.map { .text($0) } ?? .null, at: 6)
            try statement.bind(values.map { .text($0) } ?? .null, at: 7)
            while try statement.step() {}
            changes.append(
                HistoryChange(
                    changeID: connection.lastInsertRowID,
                    side: .new,
                    type: entry.type,
                    entity: entry.entity,
                    objectID: entry.objectID,
                    properties: entry.type == .update ? entry.properties : nil,
                    tombstone: entry.tombstone,
                    recordedValuesJSON: values
                )
            )
        }
        return changes
    }

    /// Decodes one `coexist_change` row selected as `id, token, type, entity, object_id, properties, tombstone`
    /// and, when the table has it, `vals`.
    static func decode(_ row: Row) -> HistoryChange {
        // Property lists are read without a JSON decoder when written plainly (as they are); a decoder is made
        // only for the others and for tombstones (one each cost 15,000 instructions a change, read back by
        // the mirror and the event service).
        let properties = row[5].textValue.flatMap {
            JSONText.plainStrings($0) ?? (try? JSONDecoder().decode([String].self, from: Data($0.utf8)))
        }
        let tombstone = row[6].textValue.flatMap {
            try? JSONDecoder().decode([String: AttributeValue].self, from: Data($0.utf8))
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
