public import CoexistModel
public import CoexistSQLite

/// Objects a context changed and has not saved, for a query to select along with the stored rows
/// (``ObjectQuery/pending``): the rows they would have in the root table, and the stored rows left out.
///
/// The query then reads its root table as the stored rows less ``excluded`` plus these rows (in a temporary
/// table of the connection, which a read-only context's connection may also write): one SQL predicate, one
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

    /// What stands for `table` in a query's FROM clause with `pending`, and its arguments (bound before the
    /// query's own): its stored rows less the excluded ones (a JSON array bound once), plus, when there are
    /// pending rows, those rows, loaded into this connection's temporary table for `table` (made once;
    /// one statement shape: every column, NULL where a row names none). Without pending rows, the table
    /// is read as it is, so its indexes still serve the query's order and window.
    func pendingSource(_ table: String, _ pending: PendingRows) throws -> (sql: String, arguments: [SQLiteValue]) {
        let quoted = SQLIdentifier.quoted(table)
        let excluded: [SQLiteValue] = [.text("[" + pending.excluded.map(String.init).joined(separator: ",") + "]")]
        let kept = "SELECT * FROM main.\(quoted) WHERE Z_PK NOT IN (SELECT value FROM json_each(?))"
        guard !pending.rows.isEmpty else { return ("(\(kept))", excluded) }
        let temporary = SQLIdentifier.quoted("coexist_pending_" + table)
        var columns: [String] = []
        try connection.forEachRow("SELECT name FROM pragma_table_info(?, 'main')", [.text(table)]) { row in
            if let name = row[0].textValue { columns.append(name) }
        }
        try connection.writingTemporaryTables {
            var existing: [String] = []
            try connection.forEachRow(
                "SELECT name FROM pragma_table_info(?, 'temp')",
                [.text("coexist_pending_" + table)]
            ) {
                row in if let name = row[0].textValue { existing.append(name) }
            }
            if existing != columns {
                // The table gained columns since (a migration): made again to match.
                try connection.execute("DROP TABLE IF EXISTS temp.\(temporary)")
                try connection.execute("CREATE TEMP TABLE \(temporary) AS SELECT * FROM main.\(quoted) WHERE 0")
            }
            try connection.execute("DELETE FROM temp.\(temporary)")
            let insert =
                "INSERT INTO temp.\(temporary) (\(columns.map(SQLIdentifier.quoted).joined(separator: ", "))) "
                + "VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))"
            for row in pending.rows { try connection.run(insert, columns.map { row[$0] ?? .null }) }
        }
        return ("(\(kept) UNION ALL SELECT * FROM temp.\(temporary))", excluded)
    }
}
