import CoexistHistory
import CoexistModel
public import CoexistSQLite

extension NewSchema {
    /// `coexist_identity`: the bridge's record of which legacy `Z_PK` each identity belongs to, per root
    /// entity (for entities whose identity is generated, and as the key translation for all).
    public static let identityTableStatements = [
        """
        CREATE TABLE IF NOT EXISTS coexist_identity (
            entity TEXT NOT NULL,
            pk INTEGER NOT NULL,
            id TEXT NOT NULL,
            PRIMARY KEY (entity, pk),
            UNIQUE (entity, id)
        ) STRICT
        """
    ]

    /// `coexist_schema_version`: the model version the new schema is at (its version identifiers, a JSON
    /// array), written when the schema is created or brought up to a model, and by a migration.
    public static let versionTableStatements = [
        """
        CREATE TABLE IF NOT EXISTS coexist_schema_version (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            identifiers TEXT NOT NULL
        ) STRICT
        """
    ]

    /// The statement (and its argument) that records `identifiers` as the new schema's version.
    public static func versionStatement(_ identifiers: [String]) -> (sql: String, arguments: [SQLiteValue]) {
        let list = "[" + identifiers.map { JSONText.string($0) }.joined(separator: ",") + "]"
        return ("INSERT OR REPLACE INTO coexist_schema_version (id, identifiers) VALUES (1, ?)", [.text(list)])
    }

    /// Every statement that creates the schema: entity tables, join tables, indexes on foreign keys and
    /// `kind`, sub-entity views, and coexist's own tables. Touches no Core Data table.
    public func createStatements() -> [String] {
        var statements: [String] = []
        var indexes: [String] = []
        for table in tables {
            let quotedTable = SQLIdentifier.quoted(table.name)
            var definitions: [String] = []
            for column in table.columns {
                var text = "\(SQLIdentifier.quoted(column.name)) \(column.type)"
                if column.isKey && table.rootEntity != nil { text += " PRIMARY KEY NOT NULL" }
                if column.isKey && table.rootEntity == nil || column.name == "kind" { text += " NOT NULL" }
                if let check = column.check { text += " CHECK (\(check))" }
                if let references = column.references {
                    text +=
                        " REFERENCES \(SQLIdentifier.quoted(references.table)) (\"id\") ON DELETE \(references.onDelete)"
                    text += " DEFERRABLE INITIALLY DEFERRED"
                    indexes.append(
                        "CREATE INDEX \(SQLIdentifier.quoted(table.name + "_" + column.name)) ON \(quotedTable) (\(SQLIdentifier.quoted(column.name)))"
                    )
                }
                definitions.append(text)
            }
            if table.rootEntity == nil {
                let keys = table.columns.filter(\.isKey).map { SQLIdentifier.quoted($0.name) }.joined(separator: ", ")
                definitions.append("PRIMARY KEY (\(keys))")
            }
            if table.columns.contains(where: { $0.name == "kind" }) {
                indexes.append(
                    "CREATE INDEX \(SQLIdentifier.quoted(table.name + "_kind")) ON \(quotedTable) (\"kind\")"
                )
            }
            let rowid = table.rootEntity == nil ? ", WITHOUT ROWID" : ""
            statements.append(
                "CREATE TABLE \(quotedTable) (\n    " + definitions.joined(separator: ",\n    ") + "\n) STRICT\(rowid)"
            )
        }
        statements += indexes
        statements += uniqueIndexes()
        statements += views()
        statements += Self.identityTableStatements
        statements += CompanionChanges.createStatements
        return statements
    }

    /// A unique index per uniqueness constraint of the model, limited to the constraint's entity and its
    /// sub-entities when the table holds a hierarchy.
    func uniqueIndexes() -> [String] {
        var result: [String] = []
        for entity in model.entities {
            guard let mapping = entities[entity.name] else { continue }
            for constraint in entity.uniquenessConstraints where !constraint.isEmpty {
                let columns = constraint.compactMap { property -> String? in
                    switch mapping.properties[property] {
                    case .column(let column, _): column
                    case .toOne(let column, _): column
                    case .identity: "id"
                    default: nil
                    }
                }
                guard columns.count == constraint.count else { continue }
                let name = mapping.table + "_unique_" + columns.joined(separator: "_")
                var sql =
                    "CREATE UNIQUE INDEX \(SQLIdentifier.quoted(name)) ON \(SQLIdentifier.quoted(mapping.table)) ("
                    + columns.map(SQLIdentifier.quoted).joined(separator: ", ") + ")"
                if mapping.hasKindColumn {
                    // Alternatives, not `IN (…)`: SQLite 3.40 evaluates a list of three or more values through a
                    // temporary table made for every row written (`CompanionChanges.createStatements`).
                    sql +=
                        " WHERE "
                        + model.hierarchy(from: entity).map { "\"kind\" = '\($0.name)'" }.joined(separator: " OR ")
                }
                result.append(sql)
            }
        }
        return result
    }

    /// A view per sub-entity (`graphic_novel`), selecting its rows (and its sub-entities') from the root table.
    func views() -> [String] {
        var taken = Set(tables.map { $0.name.lowercased() })
        var result: [String] = []
        for entity in model.entities where entity.superentity != nil {
            let name = Naming.snakeCase(entity.name)
            guard let mapping = entities[entity.name], SQLIdentifier.isPlain(name),
                taken.insert(name.lowercased()).inserted
            else { continue }
            let kinds = model.hierarchy(from: entity).map { "'\($0.name)'" }.joined(separator: ", ")
            result.append(
                "CREATE VIEW \(SQLIdentifier.quoted(name)) AS SELECT * FROM \(SQLIdentifier.quoted(mapping.table)) WHERE \"kind\" IN (\(kinds))"
            )
        }
        return result
    }
}
