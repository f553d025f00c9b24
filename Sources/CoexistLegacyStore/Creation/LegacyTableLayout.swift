import CoexistModel
import CoexistSQLite

/// The tables and indexes Core Data would create for a model, with entity numbers assigned as Core Data
/// assigns them (§1.1–§1.4).
///
/// Columns follow Core Data's naming, collision suffixes and grouping by SQL type (INTEGER, then
/// FLOAT/TIMESTAMP/DECIMAL, then VARCHAR, then BLOB). Join tables are named after the side with the lower
/// entity number (the rule real stores follow is not fully known, §1.4: readers resolve names from the
/// schema, so any consistent choice reads back). Uniqueness constraints take the form of the framework
/// version: a `CONSTRAINT … UNIQUE` clause of the table before 1000 (Moody, 637), a `CREATE UNIQUE INDEX`
/// from then on (CoreDataPlus, 1044; Photos, 1522) — where between 637 and 1044 it changed is not known.
struct LegacyTableLayout {
    let model: Model
    let numbers: [String: Int]
    let frameworkVersion: Int

    init(model: Model, frameworkVersion: Int = StoreCreator.Options().frameworkVersion) {
        self.model = model
        numbers = model.defaultEntityNumbers()
        self.frameworkVersion = frameworkVersion
    }

    /// Whether uniqueness constraints are table constraints (before framework version 1000).
    var uniquenessInTable: Bool { frameworkVersion < 1_000 }

    /// Every `CREATE TABLE` and `CREATE INDEX` statement for the model's entities.
    func statements() throws(SQLiteError) -> [String] {
        var tables: [String] = []
        var indexes: [String] = []
        var extraColumns: [String: [(String, String)]] = [:]  // Z_FOK_ columns the destination table needs
        for entity in model.entities {
            for relationship in entity.relationships
            where relationship.isToMany && relationship.isOrdered && !relationship.isTransient {
                if let inverse = model.inverse(of: relationship), !inverse.isToMany,
                    let destination = model.entity(named: relationship.destination)
                {
                    let table = tableName(model.root(of: destination))
                    extraColumns[table, default: []].append(("Z_FOK_" + inverse.name.uppercased(), "INTEGER"))
                }
            }
        }
        for root in model.entities where root.superentity == nil {
            let table = tableName(root)
            try SQLIdentifier.validate(table)
            let hierarchy = model.hierarchy(from: root)
            var columns: [(name: String, type: String)] = []
            var seen: Set<String> = ["Z_PK", "Z_ENT", "Z_OPT"]
            for entity in hierarchy {
                for attribute in entity.attributes.sorted(by: { $0.name < $1.name }) where !attribute.isTransient {
                    let column = columnName(attribute.name, declaredBy: entity, in: root)
                    if seen.insert(column).inserted { columns.append((column, attribute.type.legacyColumnType)) }
                    if attribute.isIndexed {
                        indexes.append("CREATE INDEX \(table)_\(column)_INDEX ON \(table) (\(column))")
                    }
                }
                for relationship in entity.relationships.sorted(by: { $0.name < $1.name })
                where !relationship.isToMany && !relationship.isTransient {
                    let column = columnName(relationship.name, declaredBy: entity, in: root)
                    if seen.insert(column).inserted { columns.append((column, "INTEGER")) }
                    if let destination = model.entity(named: relationship.destination),
                        !model.subentities(of: destination).isEmpty,
                        let rootNumber = numbers[model.root(of: destination).name]
                    {
                        let entityColumn = "Z\(rootNumber)_\(relationship.name.uppercased())"
                        if seen.insert(entityColumn).inserted { columns.append((entityColumn, "INTEGER")) }
                    }
                    indexes.append("CREATE INDEX \(table)_\(column)_INDEX ON \(table) (\(column))")
                }
            }
            for (column, type) in extraColumns[table] ?? [] where seen.insert(column).inserted {
                columns.append((column, type))
            }
            let order = ["INTEGER": 0, "FLOAT": 1, "TIMESTAMP": 1, "DECIMAL": 1, "VARCHAR": 2, "BLOB": 3]
            let grouped = columns.enumerated().sorted { lhs, rhs in
                let left = order[lhs.element.type] ?? 3
                let right = order[rhs.element.type] ?? 3
                return left != right ? left < right : lhs.offset < rhs.offset
            }.map(\.element)
            for column in grouped { try SQLIdentifier.validate(column.name) }
            let body =
                (["Z_PK INTEGER PRIMARY KEY", "Z_ENT INTEGER", "Z_OPT INTEGER"]
                + grouped.map { "\($0.name) \($0.type)" })
                .joined(separator: ", ")
            let constraints = uniquenessInTable ? hierarchy.flatMap { uniqueColumns($0, root: root) } : []
            if constraints.isEmpty {
                tables.append("CREATE TABLE \(table) ( \(body) )")
            } else {
                // As Core Data wrote it (Moody): the clauses after the columns, no space before the last ")".
                let clauses = constraints.map {
                    "CONSTRAINT \($0.joined(separator: "_")) UNIQUE (\($0.joined(separator: ", ")))"
                }
                tables.append("CREATE TABLE \(table) ( \(body), \(clauses.joined(separator: ", ")))")
            }
            if hierarchy.count > 1 { indexes.append("CREATE INDEX \(table)_Z_ENT_INDEX ON \(table) (Z_ENT)") }
            for entity in hierarchy {
                if !uniquenessInTable { indexes += uniqueIndexes(entity, root: root, table: table) }
                indexes += compoundIndexes(entity, root: root, table: table)
            }
        }
        let (joinTables, joinIndexes) = joinTableStatements()
        return tables + joinTables + indexes + joinIndexes
    }

    func tableName(_ root: Entity) -> String { "Z" + root.name.uppercased() }

    /// The column of property `name` declared by `declarer`, with the collision suffix among siblings.
    func columnName(_ name: String, declaredBy declarer: Entity, in root: Entity) -> String {
        let declarers = model.hierarchy(from: root).filter { candidate in
            candidate.attributes.contains { $0.name == name && !$0.isTransient }
                || candidate.relationships.contains { $0.name == name && !$0.isTransient && !$0.isToMany }
        }
        .sorted { (numbers[$0.name] ?? 0) < (numbers[$1.name] ?? 0) }
        let position = declarers.firstIndex { $0.name == declarer.name } ?? 0
        return "Z" + name.uppercased() + (position == 0 ? "" : String(position))
    }

    /// The columns of each of `entity`'s uniqueness constraints.
    private func uniqueColumns(_ entity: Entity, root: Entity) -> [[String]] {
        entity.uniquenessConstraints.filter { !$0.isEmpty }.map { properties in
            properties.map { property -> String in
                let owner =
                    model.ancestry(of: entity).first {
                        $0.attribute(named: property) != nil || $0.relationship(named: property) != nil
                    } ?? entity
                return columnName(property, declaredBy: owner, in: root)
            }
        }
    }

    private func uniqueIndexes(_ entity: Entity, root: Entity, table: String) -> [String] {
        zip(entity.uniquenessConstraints.filter { !$0.isEmpty }, uniqueColumns(entity, root: root)).map {
            properties,
            columns in
            let name = "Z_\(entity.name)_UNIQUE_" + properties.joined(separator: "_")
            let collated = columns.map { $0 + " COLLATE BINARY ASC" }
            return "CREATE UNIQUE INDEX \(name) ON \(table) (\(collated.joined(separator: ", ")))"
        }
    }

    private func compoundIndexes(_ entity: Entity, root: Entity, table: String) -> [String] {
        entity.indexes.filter { !$0.elements.isEmpty }.map { index in
            let columns = index.elements.map { element -> String in
                let owner =
                    model.ancestry(of: entity).first {
                        $0.attribute(named: element.property) != nil || $0.relationship(named: element.property) != nil
                    } ?? entity
                return columnName(element.property, declaredBy: owner, in: root)
            }
            let fallback = table + "_" + columns.joined(separator: "_")
            let name =
                index.name.map { "Z_\(entity.name)_\($0)" }.flatMap { SQLIdentifier.isPlain($0) ? $0 : nil } ?? fallback
            // As Core Data writes them: a fetch index (named, CoreDataPlus SampleModel V2) collates every
            // column; an older compound index (unnamed, Moody) does not.
            let listed = index.name == nil ? columns : columns.map { $0 + " COLLATE BINARY ASC" }
            return "CREATE INDEX \(name) ON \(table) (\(listed.joined(separator: ", ")))"
        }
    }

    private func joinTableStatements() -> ([String], [String]) {
        var tables: [String] = []
        var indexes: [String] = []
        var done: Set<String> = []
        for entity in model.entities {
            for relationship in entity.relationships where relationship.isToMany && !relationship.isTransient {
                guard let inverse = model.inverse(of: relationship), inverse.isToMany,
                    let destination = model.entity(named: relationship.destination),
                    let sourceNumber = numbers[entity.name], let destinationNumber = numbers[destination.name]
                else { continue }
                let key = [entity.name + "." + relationship.name, destination.name + "." + inverse.name].sorted()
                    .joined(separator: "|")
                guard done.insert(key).inserted else { continue }
                // Name the table from the side with the lower entity number.
                let (ownerNumber, ownerRelationship, otherNumber, otherRelationship) =
                    sourceNumber <= destinationNumber
                    ? (sourceNumber, relationship, destinationNumber, inverse)
                    : (destinationNumber, inverse, sourceNumber, relationship)
                let table = "Z_\(ownerNumber)\(ownerRelationship.name.uppercased())"
                let ownerColumn = "Z_\(ownerNumber)\(otherRelationship.name.uppercased())"
                let otherColumn = "Z_\(otherNumber)\(ownerRelationship.name.uppercased())"
                var columns = ["\(ownerColumn) INTEGER", "\(otherColumn) INTEGER"]
                if ownerRelationship.isOrdered {
                    columns.append("Z_FOK_\(otherNumber)\(ownerRelationship.name.uppercased()) INTEGER")
                }
                if otherRelationship.isOrdered {
                    columns.append("Z_FOK_\(ownerNumber)\(otherRelationship.name.uppercased()) INTEGER")
                }
                columns.append("PRIMARY KEY (\(ownerColumn), \(otherColumn))")
                tables.append("CREATE TABLE \(table) ( \(columns.joined(separator: ", ")) )")
                indexes.append(
                    "CREATE INDEX \(table)_\(otherColumn)_INDEX ON \(table) (\(otherColumn), \(ownerColumn))"
                )
            }
        }
        return (tables, indexes)
    }

    /// The number of `ZTOMBSTONEn` columns the model needs: the most preserved attributes of any entity.
    func tombstoneCount() -> Int {
        model.entities.map { entity in
            model.allAttributes(of: entity).filter { $0.preservesValueInHistoryOnDeletion && !$0.isTransient }.count
        }.max() ?? 0
    }
}
