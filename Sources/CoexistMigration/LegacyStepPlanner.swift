import CoexistLegacyStore
import CoexistModel
import CoexistSQLite

/// Plans the Core Data side of one version step, the way Core Data's lightweight migration moves a store:
/// every entity table and join table is rebuilt to the destination's layout (``PlannedLayout``, so the
/// result is exactly what `create` makes for that version), rows copied set-based, one `INSERT … SELECT`
/// per destination entity, with the new `Z_ENT`; `Z_PK` and `Z_OPT` are kept.
///
/// New attributes get the model's default; renamed properties keep their values; a non-optional attribute
/// with a default fills the rows that had none; references to rows that no longer exist (a removed
/// sub-entity's) are cleared. `Z_PRIMARYKEY` is rewritten (a root keeps the highest key it ever gave), the
/// history's `ZENTITY` numbers follow the renumbering (see ``HistoryEras``), and `ACHANGE` gains the
/// tombstone columns the destination needs.
struct LegacyStepPlanner {
    let connection: Connection
    let source: Model
    let destination: Model
    let mapping: StepMapping
    let frameworkVersion: Int
    let step: String
    /// The id of this step's `coexist_migration` record.
    let migrationID: Int64

    /// The step's statements, planned against the file as it is now.
    func plan() throws -> [MigrationStatement] {
        let store = try LegacyStore(connection: connection, model: source)
        guard let old = store.schema else { throw unsupported("the store's schema does not resolve") }
        let layout = try PlannedLayout(model: destination, frameworkVersion: frameworkVersion)
        let oldTables = Self.tables(of: old)
        var statements = try dropIndexes(of: oldTables)
        statements += oldTables.map { MigrationStatement("ALTER TABLE \($0.quotedIdentifier) RENAME TO \(aside($0))") }
        // Tables first, indexes once the rows are in: one sorted build each instead of random inserts.
        let (tables, indexes) = layout.statements.partitioned { $0.hasPrefix("CREATE TABLE") }
        statements += tables.map { MigrationStatement($0) }
        statements += try copyRows(old, layout)
        statements += try copyJoinRows(old, layout)
        statements += indexes.map { MigrationStatement($0) }
        statements += references(layout)
        statements += oldTables.map { MigrationStatement("DROP TABLE \(aside($0))") }
        statements += primaryKeys(store, layout)
        statements += try history(store, old, layout)
        statements += slotOrders()
        return statements
    }

    /// Where a table of the source layout waits while the destination's is filled.
    private func aside(_ table: String) -> String { RowCopySQL.aside(table) }

    private var sql: RowCopySQL {
        RowCopySQL(key: "Z_PK", source: source, unsupported: unsupported)
    }

    private func unsupported(_ detail: String) -> MigrationError {
        .unsupported(path: connection.path, step: step, detail: detail)
    }

    /// Every entity table and join table of a resolved schema, sorted.
    static func tables(of schema: StoreSchema) -> [String] {
        var tables: Set<String> = []
        for mapping in schema.entities.values {
            tables.insert(mapping.table)
            for storage in mapping.properties.values {
                if case .joinTable(let table, _, _, _) = storage { tables.insert(table) }
            }
        }
        return tables.sorted()
    }

    /// `DROP INDEX` for the explicit indexes of `tables` (their names are reused by the new layout); a
    /// trigger on them is refused: re-creating Core Data's triggers is not supported yet.
    private func dropIndexes(of tables: [String]) throws -> [MigrationStatement] {
        let names = Set(tables)
        let rows = try connection.rows(
            "SELECT type, name, tbl_name FROM sqlite_master WHERE type IN ('index', 'trigger') AND sql IS NOT NULL ORDER BY name"
        )
        var result: [MigrationStatement] = []
        for row in rows {
            guard let type = row[0].textValue, let name = row[1].textValue, let table = row[2].textValue,
                names.contains(table)
            else { continue }
            guard type == "index" else {
                throw unsupported("trigger \(name) on \(table): re-creating Core Data's triggers")
            }
            result.append(MigrationStatement("DROP INDEX \(name.quotedIdentifier)"))
        }
        return result
    }

    /// The destination entities that come from a source entity: (destination, origin).
    private var kept: [(Entity, Entity)] { mapping.fills.map { ($0.destination, $0.source) } }

    /// One `INSERT … SELECT` per destination entity that has a source entity.
    private func copyRows(_ old: StoreSchema, _ layout: PlannedLayout) throws -> [MigrationStatement] {
        var result: [MigrationStatement] = []
        var feeds: [String: Set<String>] = [:]
        for fill in mapping.fills {
            let entity = fill.destination
            guard let from = old.entities[fill.source.name], let to = layout.schema.entities[entity.name] else {
                continue
            }
            feeds[to.table, default: []].insert(from.table)
            var columns = ["Z_PK", "Z_ENT", "Z_OPT"]
            var values = ["s.Z_PK", "?", "s.Z_OPT"]
            var arguments: [SQLiteValue] = [.integer(Int64(to.number))]
            for attribute in destination.allAttributes(of: entity) where !attribute.isTransient {
                guard case .attribute(let column) = to.properties[attribute.name] else { continue }
                let fallback = try attribute.defaultValue.map { try encodedDefault($0.value, attribute, entity) }
                if let value = fill.attributes[attribute.name] {
                    let (sql, bound) = try expression(value, of: fill.source, old, attribute: attribute, entity: entity)
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
                let name = "\(entity.name).\(relationship.name)"
                var previous: PropertyStorage?
                if case .property(let origin) = value { previous = from.properties[origin] }
                switch (to.properties[relationship.name], previous) {
                case (.toOne(let column, _, let order)?, _):
                    if let previous {
                        guard case .toOne(_, _, let oldOrder) = previous else {
                            throw unsupported("\(name) changes between to-one and to-many")
                        }
                        if let order, let oldOrder {
                            columns.append(order)
                            values.append("s." + oldOrder.quotedIdentifier)
                        }
                    }
                    let (sql, bound) = try expression(value, of: fill.source, old, attribute: nil, entity: entity)
                    columns.append(column)
                    values.append(sql)
                    arguments += bound
                case (_, .toOne?):
                    throw unsupported("\(name) changes between to-one and to-many")
                case (.hiddenForeignKey?, _), (_, .hiddenForeignKey?):
                    throw unsupported("\(name) is a to-many without an inverse")
                default: break
                }
            }
            arguments.append(.integer(Int64(from.number)))
            let list = columns.map(\.quotedIdentifier).joined(separator: ", ")
            result.append(
                MigrationStatement(
                    "INSERT INTO \(to.table.quotedIdentifier) (\(list)) SELECT \(values.joined(separator: ", ")) "
                        + "FROM \(aside(from.table)) AS s WHERE s.Z_ENT = ?",
                    arguments
                )
            )
        }
        for (table, sources) in feeds.sorted(by: { $0.key < $1.key }) where sources.count > 1 {
            let names = sources.sorted().joined(separator: " and ")
            throw unsupported("\(table) would take rows of \(names), whose keys may collide")
        }
        return result
    }

    /// The SQL of `value` for a row of `origin` read as `s` from its table (set aside): a column, a key
    /// path through to-ones as nested lookups (rows keep their keys), or a bound constant.
    private func expression(
        _ value: StepMapping.Value,
        of origin: Entity,
        _ old: StoreSchema,
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
                case .attribute(let column): return (table.table, .column(column, isToOne: false))
                case .toOne(let column, _, _): return (table.table, .column(column, isToOne: true))
                default: return (table.table, .elsewhere)
                }
            }
            return (keyPath, [])
        case .constant(let constant):
            guard let attribute else { throw unsupported("\(entity.name): a constant for a relationship") }
            return ("?", [try encodedDefault(constant, attribute, entity)])
        }
    }

    private func encodedDefault(_ value: AttributeValue, _ attribute: Attribute, _ entity: Entity) throws -> SQLiteValue
    {
        do {
            return try AttributeCodec.encode(value, as: attribute)
        } catch {
            throw unsupported("\(entity.name).\(attribute.name): the default value cannot be stored: \(error)")
        }
    }

    /// The rows of every many-to-many join table whose relationship existed before, both ends still there.
    private func copyJoinRows(_ old: StoreSchema, _ layout: PlannedLayout) throws -> [MigrationStatement] {
        var copies: [String: RowCopySQL.JoinCopy] = [:]
        for (entity, origin) in kept {
            guard let from = old.entities[origin.name], let to = layout.schema.entities[entity.name] else { continue }
            for relationship in destination.allRelationships(of: entity)
            where relationship.isToMany && !relationship.isTransient {
                guard
                    case .joinTable(let table, let selfColumn, let otherColumn, let order)? =
                        to.properties[relationship.name],
                    let previous = mapping.joinOrigin(of: relationship, in: entity, from: origin, source: source),
                    let target = destination.entity(named: relationship.destination),
                    let targetTable = layout.schema.entities[target.name]?.table
                else { continue }
                guard
                    case .joinTable(let oldTable, let oldSelf, let oldOther, let oldOrder)? =
                        from.properties[previous.name]
                else {
                    throw unsupported("\(entity.name).\(relationship.name) becomes a many-to-many")
                }
                var columns: [(new: String, old: String, target: String?)] = [
                    (selfColumn, oldSelf, to.table), (otherColumn, oldOther, targetTable),
                ]
                if let order, let oldOrder { columns.append((order, oldOrder, nil)) }
                try sql.add(to: &copies, table: table, from: oldTable, columns: columns)
            }
        }
        return sql.statements(copies)
    }

    /// To-ones: cleared where the row they name is gone; the destination's `Z_ENT` filled in where the
    /// destination has sub-entities.
    private func references(_ layout: PlannedLayout) -> [MigrationStatement] {
        var result: [MigrationStatement] = []
        for (entity, _) in kept {
            guard let to = layout.schema.entities[entity.name] else { continue }
            for relationship in destination.allRelationships(of: entity)
            where !relationship.isToMany && !relationship.isTransient {
                guard case .toOne(let column, let entityColumn, let order)? = to.properties[relationship.name],
                    let target = destination.entity(named: relationship.destination),
                    let targetTable = layout.schema.entities[target.name]?.table
                else { continue }
                let numbers = destination.hierarchy(from: target).compactMap { layout.numbers[$0.name] }
                let table = to.table.quotedIdentifier
                let reference = "\(table).\(column.quotedIdentifier)"
                let cleared = ([column] + [entityColumn, order].compactMap { $0 }).map {
                    "\($0.quotedIdentifier) = NULL"
                }
                result.append(
                    MigrationStatement(
                        "UPDATE \(table) SET \(cleared.joined(separator: ", ")) WHERE Z_ENT = ? AND \(reference) IS NOT NULL "
                            + "AND NOT EXISTS (SELECT 1 FROM \(targetTable.quotedIdentifier) AS d WHERE d.Z_PK = \(reference) "
                            + "AND d.Z_ENT IN (\(numbers.map(String.init).joined(separator: ", "))))",
                        [.integer(Int64(to.number))]
                    )
                )
                if let entityColumn {
                    result.append(
                        MigrationStatement(
                            "UPDATE \(table) SET \(entityColumn.quotedIdentifier) = (SELECT d.Z_ENT FROM "
                                + "\(targetTable.quotedIdentifier) AS d WHERE d.Z_PK = \(reference)) "
                                + "WHERE Z_ENT = ? AND \(reference) IS NOT NULL",
                            [.integer(Int64(to.number))]
                        )
                    )
                }
            }
        }
        return result
    }

    /// `Z_PRIMARYKEY`: the source entities' rows replaced by the destination's; a root's `Z_MAX` is the
    /// highest key its rows' roots ever gave, and never below a key its table holds.
    private func primaryKeys(_ store: LegacyStore, _ layout: PlannedLayout) -> [MigrationStatement] {
        let names = Set(source.entities.map(\.name))
        let oldRows = store.primaryKeys.filter { names.contains($0.name) }
        let oldMax = Dictionary(oldRows.map { ($0.name, $0.max) }, uniquingKeysWith: Swift.max)
        var result = [
            MigrationStatement(
                "DELETE FROM Z_PRIMARYKEY WHERE Z_ENT IN (\(oldRows.map { String($0.number) }.joined(separator: ", ")))"
            )
        ]
        for row in layout.primaryKeys {
            guard let entity = destination.entity(named: row.name) else { continue }
            guard entity.superentity == nil, let table = layout.schema.entities[row.name]?.table else {
                result.append(
                    MigrationStatement(
                        "INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, 0)",
                        [.integer(Int64(row.number)), .text(row.name), .integer(Int64(row.superNumber))]
                    )
                )
                continue
            }
            let given =
                destination.hierarchy(from: entity).compactMap { member -> Int64? in
                    guard let name = mapping.sources[member.name], let origin = source.entity(named: name)
                    else { return nil }
                    return oldMax[source.root(of: origin).name]
                }.max() ?? 0
            result.append(
                MigrationStatement(
                    "INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, 0, "
                        + "max(?, (SELECT ifnull(max(Z_PK), 0) FROM \(table.quotedIdentifier))))",
                    [.integer(Int64(row.number)), .text(row.name), .integer(given)]
                )
            )
        }
        return result
    }

    /// What the step does to kept entities' numbers: old → new (every kept entity, changed or not).
    func renumbering(_ old: StoreSchema, _ layout: PlannedLayout) -> [Int: Int] {
        var result: [Int: Int] = [:]
        for (entity, origin) in kept {
            guard let from = old.entities[origin.name]?.number, let to = layout.numbers[entity.name] else { continue }
            result[from] = to
        }
        return result
    }

    /// The history's entity numbers renumbered as the tables are (a removed entity's rows take
    /// ``HistoryEras/removedNumber(_:migration:)``), and the tombstone columns the destination needs.
    private func history(
        _ store: LegacyStore,
        _ old: StoreSchema,
        _ layout: PlannedLayout
    ) throws
        -> [MigrationStatement]
    {
        guard let columns = store.tables["ACHANGE"] else { return [] }
        let kept = renumbering(old, layout)
        var renumbered = kept.filter { $0.key != $0.value }.map { ($0.key, $0.value) }
        for entity in source.entities {
            if let number = old.entities[entity.name]?.number, kept[number] == nil {
                renumbered.append((number, HistoryEras.removedNumber(number, migration: migrationID)))
            }
        }
        renumbered.sort { $0.0 < $1.0 }
        var result: [MigrationStatement] = []
        if !renumbered.isEmpty {
            let cases = renumbered.map { "WHEN \($0.0) THEN \($0.1)" }.joined(separator: " ")
            let list = renumbered.map { String($0.0) }.joined(separator: ", ")
            result.append(
                MigrationStatement("UPDATE ACHANGE SET ZENTITY = CASE ZENTITY \(cases) END WHERE ZENTITY IN (\(list))")
            )
        }
        let present = columns.filter { $0.hasPrefix("ZTOMBSTONE") }.count
        if layout.tombstoneCount > present {
            for index in present..<layout.tombstoneCount {
                result.append(MigrationStatement("ALTER TABLE ACHANGE ADD COLUMN ZTOMBSTONE\(index) BLOB"))
            }
        }
        return result
    }

    /// The bridge's learnt slot orders of `ZCOLUMNS`: kept for entities whose name and to-manys are
    /// unchanged, dropped for the others (their bitmaps change: the order is learnt again).
    private func slotOrders() -> [MigrationStatement] {
        guard (try? connection.tableExists(SlotCalibration.table)) == true else { return [] }
        let unchanged = kept.filter { entity, origin in
            let after = destination.allRelationships(of: entity).filter { $0.isToMany && !$0.isTransient }
            let before = source.allRelationships(of: origin).filter { $0.isToMany && !$0.isTransient }
            return entity.name == origin.name && Set(after.map(\.name)) == Set(before.map(\.name))
                && Set(destination.allAttributes(of: entity).map(\.name))
                    == Set(source.allAttributes(of: origin).map(\.name))
        }.map { SQLiteValue.text($0.0.name) }
        let keep =
            unchanged.isEmpty
            ? "" : " WHERE entity NOT IN (\(Array(repeating: "?", count: unchanged.count).joined(separator: ", ")))"
        return [MigrationStatement("DELETE FROM \(SlotCalibration.table.quotedIdentifier)\(keep)", unchanged)]
    }
}
