public import CoexistModel
public import CoexistSQLite

/// Objects a context changed and has not saved, for a query to select along with the stored rows
/// (``ObjectQuery/pending``): the rows they would have in the root table, and the stored rows left out.
///
/// The query then reads its root table as the stored rows less ``excluded`` plus these rows (in this
/// connection's temporary tables, which a read-only connection may also write): one SQL predicate, one
/// order and one window decide over both, exactly as they do over saved objects.
public struct PendingRows: Sendable {
    /// Each object's row, by column (a column it does not name is NULL).
    public var rows: [[String: SQLiteValue]]
    /// `Z_PK`s of stored rows the query leaves out: those `rows` stand for, and objects deleted unsaved.
    public var excluded: [Int64]

    /// Pending rows.
    public init(rows: [[String: SQLiteValue]], excluded: [Int64]) {
        self.rows = rows
        self.excluded = excluded
    }
}

extension LegacyStore {
    /// The row of an object of concrete `entity` with key `pk` in its root table, as a save would write its
    /// `attributes` and `toOnes` (targets by identity; nil: none): `Z_PK`, `Z_ENT`, `Z_OPT`, each attribute's
    /// column encoded as the store keeps it (a value that does not fit its type is NULL), each to-one's key
    /// and entity columns.
    public func pendingRow(
        entity: String,
        pk: Int64,
        version: Int64,
        attributes: [String: AttributeValue],
        toOnes: [String: ObjectID?]
    ) throws -> [String: SQLiteValue] {
        let (model, schema) = try requireModel()
        guard let described = model.entity(named: entity), let mapping = schema.entities[entity] else {
            throw LegacyStoreError.modelMismatch(path: path, detail: "no entity named \(entity)")
        }
        var row: [String: SQLiteValue] = [
            "Z_PK": .integer(pk), "Z_ENT": .integer(Int64(mapping.number)), "Z_OPT": .integer(version),
        ]
        for attribute in model.allAttributes(of: described) where !attribute.isTransient {
            guard case .attribute(let column)? = mapping.properties[attribute.name] else { continue }
            row[column] = (try? AttributeCodec.encode(attributes[attribute.name] ?? .null, as: attribute)) ?? .null
        }
        for (name, target) in toOnes {
            guard case .toOne(let column, let entityColumn, _)? = mapping.properties[name] else { continue }
            row[column] = target.map { .integer($0.pk) } ?? .null
            if let entityColumn {
                row[entityColumn] =
                    target.flatMap { schema.entities[$0.entity] }.map { .integer(Int64($0.number)) } ?? .null
            }
        }
        return row
    }

    /// Loads `pending` into this connection's temporary tables and returns what stands for `table` in a
    /// query's FROM clause: its stored rows less the excluded ones, and the pending rows.
    func pendingSource(_ table: String, _ pending: PendingRows) throws -> String {
        let quoted = SQLIdentifier.quoted(table)
        try connection.execute("DROP TABLE IF EXISTS temp.coexist_pending")
        try connection.execute("CREATE TEMP TABLE coexist_pending AS SELECT * FROM main.\(quoted) WHERE 0")
        try connection.execute("CREATE TEMP TABLE IF NOT EXISTS coexist_excluded (pk INTEGER PRIMARY KEY)")
        try connection.execute("DELETE FROM temp.coexist_excluded")
        var columns: Set<String> = []
        try connection.forEachRow("SELECT name FROM pragma_table_info(?, 'temp')", [.text("coexist_pending")]) {
            row in if let name = row[0].textValue { columns.insert(name) }
        }
        for row in pending.rows {
            let named = row.filter { columns.contains($0.key) }.sorted { $0.key < $1.key }
            try connection.run(
                "INSERT INTO temp.coexist_pending (\(named.map { SQLIdentifier.quoted($0.key) }.joined(separator: ", "))) "
                    + "VALUES (\(named.map { _ in "?" }.joined(separator: ", ")))",
                named.map(\.value)
            )
        }
        for pk in pending.excluded {
            try connection.run("INSERT OR IGNORE INTO temp.coexist_excluded (pk) VALUES (?)", [.integer(pk)])
        }
        return "(SELECT * FROM main.\(quoted) WHERE Z_PK NOT IN (SELECT pk FROM temp.coexist_excluded) "
            + "UNION ALL SELECT * FROM temp.coexist_pending)"
    }
}
