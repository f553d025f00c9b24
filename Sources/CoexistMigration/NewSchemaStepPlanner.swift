import CoexistModel
import CoexistSQLite
import CoexistStore

/// Plans the new schema's side of one version step: every entity and join table rebuilt to the
/// destination's derived schema (``NewSchema/createStatements()``), rows copied set-based per destination
/// entity (`id` kept, `kind` renamed), defaults for new attributes, references to rows that no longer exist
/// cleared, views re-created; `coexist_change` follows entity renames. Nothing when the file has no new
/// schema yet (the bridge derives it on its first start).
struct NewSchemaStepPlanner {
    let connection: Connection
    let source: Model
    let destination: Model
    let mapping: StepMapping
    let overrides: SchemaOverrides
    let step: String

    /// The step's statements, planned against the file as it is now.
    func plan() throws -> [MigrationStatement] {
        let old = try NewSchema(model: source, overrides: overrides)
        let new = try NewSchema(model: destination, overrides: overrides)
        guard let first = old.tables.first, try connection.tableExists(first.name) else { return [] }
        let oldTables = old.tables.map(\.name)
        var statements = try dropViewsAndIndexes(of: Set(oldTables))
        statements += oldTables.map { MigrationStatement("ALTER TABLE \($0.quotedIdentifier) RENAME TO \(aside($0))") }
        // Tables first, indexes and views once the rows are in (rows go in key order: see copyRows).
        let (tables, rest) = new.createStatements().partitioned { $0.hasPrefix("CREATE TABLE") }
        statements += tables.map { MigrationStatement($0) }
        statements += try copyRows(old, new)
        statements += try copyJoinRows(old, new)
        statements += rest.map { MigrationStatement($0) }
        statements += references(new)
        statements += oldTables.map { MigrationStatement("DROP TABLE \(aside($0))") }
        statements += renamedChanges()
        let version = NewSchema.versionStatement(destination.versionIdentifiers)
        statements += NewSchema.versionTableStatements.map { MigrationStatement($0) }
        statements.append(MigrationStatement(version.sql, version.arguments))
        return statements
    }

    private func aside(_ table: String) -> String { RowCopySQL.aside(table) }

    private var sql: RowCopySQL {
        RowCopySQL(key: "\"id\"", source: source, unsupported: unsupported)
    }

    private func unsupported(_ detail: String) -> MigrationError {
        .unsupported(path: connection.path, step: step, detail: detail)
    }

    /// Every view (they select from the old tables) and the explicit indexes of `tables`.
    private func dropViewsAndIndexes(of tables: Set<String>) throws -> [MigrationStatement] {
        let rows = try connection.rows(
            "SELECT type, name, tbl_name FROM sqlite_master WHERE type IN ('view', 'index', 'trigger') AND sql IS NOT NULL ORDER BY type DESC, name"
        )
        var result: [MigrationStatement] = []
        for row in rows {
            guard let type = row[0].textValue, let name = row[1].textValue, let table = row[2].textValue else {
                continue
            }
            switch type {
            case "view":
                // A view of the new schema is named after a sub-entity and selects from its root's table.
                guard try viewSelectsFrom(name, tables) else { continue }
                result.append(MigrationStatement("DROP VIEW \(name.quotedIdentifier)"))
            case "index" where tables.contains(table):
                result.append(MigrationStatement("DROP INDEX \(name.quotedIdentifier)"))
            case "trigger" where tables.contains(table):
                throw unsupported("trigger \(name) on \(table) of the new schema")
            default: continue
            }
        }
        return result
    }

    private func viewSelectsFrom(_ view: String, _ tables: Set<String>) throws -> Bool {
        let sql =
            try connection.scalar("SELECT sql FROM sqlite_master WHERE type = 'view' AND name = ?", [.text(view)])
            .textValue ?? ""
        return tables.contains { sql.contains(" FROM \($0.quotedIdentifier) ") }
    }

    private var kept: [(Entity, Entity)] { mapping.fills.map { ($0.destination, $0.source) } }

    private func copyRows(_ old: NewSchema, _ new: NewSchema) throws -> [MigrationStatement] {
        var result: [MigrationStatement] = []
        for fill in mapping.fills {
            let entity = fill.destination
            let origin = fill.source
            guard let from = old.entities[origin.name], let to = new.entities[entity.name] else { continue }
            guard Self.sameIdentity(from.identity, to.identity, fill) else {
                throw unsupported("\(entity.name): the identity changes (\(from.identity) → \(to.identity))")
            }
            var columns = ["id"]
            var values = ["s.\"id\""]
            var arguments: [SQLiteValue] = []
            if to.hasKindColumn {
                columns.append("kind")
                values.append("?")
                arguments.append(.text(entity.name))
            }
            for attribute in destination.allAttributes(of: entity) where !attribute.isTransient {
                guard case .column(let column, _)? = to.properties[attribute.name] else { continue }
                let fallback = try attribute.defaultValue.map { try encoded($0.value, attribute, entity) }
                if let value = fill.attributes[attribute.name] {
                    let (sql, bound) = try expression(value, of: origin, old, attribute: attribute, entity: entity)
                    if !attribute.isOptional, let fallback {
                        values.append("coalesce(\(sql), ?)")
                        arguments += bound + [fallback]
                    } else {
                        values.append(sql)
                        arguments += bound
                    }
                } else if let fallback {
                    values.append("?")
                    arguments.append(fallback)
                } else {
                    continue
                }
                columns.append(column)
            }
            for relationship in destination.allRelationships(of: entity) where !relationship.isTransient {
                guard let value = fill.relationships[relationship.name] else { continue }
                var previous: NewSchema.PropertyMapping?
                if case .property(let name) = value { previous = from.properties[name] }
                switch (to.properties[relationship.name], previous) {
                case (.toOne(let column, let position)?, _):
                    if let previous {
                        guard case .toOne(_, let oldPosition) = previous else {
                            throw unsupported("\(entity.name).\(relationship.name) changes between to-one and to-many")
                        }
                        if let position, let oldPosition {
                            columns.append(position)
                            values.append("s." + oldPosition.quotedIdentifier)
                        }
                    }
                    let (sql, bound) = try expression(value, of: origin, old, attribute: nil, entity: entity)
                    columns.append(column)
                    values.append(sql)
                    arguments += bound
                case (_, .toOne?):
                    throw unsupported("\(entity.name).\(relationship.name) changes between to-one and to-many")
                default: break
                }
            }
            var sql =
                "INSERT INTO \(to.table.quotedIdentifier) (\(columns.map(\.quotedIdentifier).joined(separator: ", "))) "
                + "SELECT \(values.joined(separator: ", ")) FROM \(aside(from.table)) AS s"
            if from.hasKindColumn {
                sql += " WHERE s.\"kind\" = ?"
                arguments.append(.text(origin.name))
            }
            // In key order: the text primary key's index then grows at its end instead of at random places
            // (measured: 200,000 tasks in 0.7 s instead of 1.6 s).
            result.append(MigrationStatement(sql + " ORDER BY s.\"id\"", arguments))
        }
        return result
    }

    private func encoded(_ value: AttributeValue, _ attribute: Attribute, _ entity: Entity) throws -> SQLiteValue {
        do {
            return try NewValueCodec.encode(value, as: attribute)
        } catch {
            throw unsupported("\(entity.name).\(attribute.name): the value cannot be stored: \(error)")
        }
    }

    /// The SQL of `value` for a row of `origin` read as `s` from its table (set aside): a column, a key
    /// path through to-ones as nested lookups (rows keep their ids), or a bound constant.
    private func expression(
        _ value: StepMapping.Value,
        of origin: Entity,
        _ old: NewSchema,
        attribute: Attribute?,
        entity: Entity
    ) throws -> (String, [SQLiteValue]) {
        switch value {
        case .property(let name):
            return try expression(.keyPath([name]), of: origin, old, attribute: attribute, entity: entity)
        case .keyPath(let path):
            let keyPath = try sql.keyPath(path, from: origin, for: entity) { current, component in
                guard let table = old.entities[current.name], let storage = table.properties[component] else {
                    return nil
                }
                switch storage {
                case .column(let column, _): return (table.table, .column(column, isToOne: false))
                case .identity: return (table.table, .column("id", isToOne: false))
                case .toOne(let column, _): return (table.table, .column(column, isToOne: true))
                default: return (table.table, .elsewhere)
                }
            }
            return (keyPath, [])
        case .constant(let constant):
            guard let attribute else { throw unsupported("\(entity.name): a constant for a relationship") }
            return ("?", [try encoded(constant, attribute, entity)])
        }
    }

    /// Whether the identity stays the same attribute (renamed or not), or stays generated.
    private static func sameIdentity(
        _ old: NewSchema.IdentitySource,
        _ new: NewSchema.IdentitySource,
        _ fill: StepMapping.Fill
    ) -> Bool {
        switch (old, new) {
        case (.generated, .generated): true
        case (.uuidAttribute(let before), .uuidAttribute(let after)),
            (.textAttribute(let before), .textAttribute(let after)):
            fill.attributes[after] == .property(before)
        default: false
        }
    }

    private func copyJoinRows(_ old: NewSchema, _ new: NewSchema) throws -> [MigrationStatement] {
        var copies: [String: RowCopySQL.JoinCopy] = [:]
        for (entity, origin) in kept {
            guard let from = old.entities[origin.name], let to = new.entities[entity.name] else { continue }
            for relationship in destination.allRelationships(of: entity)
            where relationship.isToMany && !relationship.isTransient {
                guard
                    case .join(let table, let selfColumn, let otherColumn, let position)? =
                        to.properties[relationship.name],
                    let previous = mapping.joinOrigin(of: relationship, in: entity, from: origin, source: source),
                    let targetTable = new.entities[relationship.destination]?.table
                else { continue }
                guard
                    case .join(let oldTable, let oldSelf, let oldOther, let oldPosition)? =
                        from.properties[previous.name]
                else {
                    throw unsupported("\(entity.name).\(relationship.name) moves to a join table")
                }
                var columns: [(new: String, old: String, target: String?)] = [
                    (selfColumn, oldSelf, to.table), (otherColumn, oldOther, targetTable),
                ]
                if let position, let oldPosition { columns.append((position, oldPosition, nil)) }
                try sql.add(to: &copies, table: table, from: oldTable, columns: columns)
            }
        }
        return sql.statements(copies)
    }

    /// To-ones naming a row that is gone (a removed sub-entity's) are cleared.
    private func references(_ new: NewSchema) -> [MigrationStatement] {
        var result: [MigrationStatement] = []
        for (entity, _) in kept {
            guard let to = new.entities[entity.name] else { continue }
            for relationship in destination.allRelationships(of: entity)
            where !relationship.isToMany && !relationship.isTransient {
                guard case .toOne(let column, let position)? = to.properties[relationship.name],
                    let target = destination.entity(named: relationship.destination),
                    let targetMapping = new.entities[target.name]
                else { continue }
                let table = to.table.quotedIdentifier
                let reference = "\(table).\(column.quotedIdentifier)"
                let cleared = ([column] + [position].compactMap { $0 }).map { "\($0.quotedIdentifier) = NULL" }
                var arguments: [SQLiteValue] = []
                var sql = "UPDATE \(table) SET \(cleared.joined(separator: ", ")) WHERE \(reference) IS NOT NULL"
                if to.hasKindColumn {
                    sql += " AND \(table).\"kind\" = ?"
                    arguments.append(.text(entity.name))
                }
                sql +=
                    " AND NOT EXISTS (SELECT 1 FROM \(targetMapping.table.quotedIdentifier) AS d WHERE d.\"id\" = \(reference)"
                if targetMapping.hasKindColumn {
                    let kinds = destination.hierarchy(from: target).map { SQLiteValue.text($0.name) }
                    sql += " AND d.\"kind\" IN (\(Array(repeating: "?", count: kinds.count).joined(separator: ", ")))"
                    arguments += kinds
                }
                result.append(MigrationStatement(sql + ")", arguments))
            }
        }
        return result
    }

    /// `coexist_change` rows name entities: a renamed entity's rows take its new name.
    private func renamedChanges() -> [MigrationStatement] {
        let renames = kept.filter { $0.0.name != $0.1.name }
        guard !renames.isEmpty, (try? connection.tableExists("coexist_change")) == true else { return [] }
        // One statement: renames that chain (A → B, B → C) must not merge.
        let cases = renames.map { _ in "WHEN ? THEN ?" }.joined(separator: " ")
        let list = Array(repeating: "?", count: renames.count).joined(separator: ", ")
        let arguments =
            renames.flatMap { [SQLiteValue.text($0.1.name), .text($0.0.name)] } + renames.map { .text($0.1.name) }
        return [
            MigrationStatement(
                "UPDATE coexist_change SET entity = CASE entity \(cases) END WHERE entity IN (\(list))",
                arguments
            )
        ]
    }
}
