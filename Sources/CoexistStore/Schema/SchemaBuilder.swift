import CoexistModel
import CoexistSQLite

/// Builds ``NewSchema`` from a model: table and column names, identities, foreign keys, join tables.
struct SchemaBuilder {
    let model: Model
    let overrides: SchemaOverrides
    var entities: [String: NewSchema.EntityMapping] = [:]
    var tables: [NewSchema.Table] = []
    private var tableNames: [String: String] = [:]  // root entity → table
    private var taken: Set<String> = []  // lower-cased table names in use

    /// Names the new schema reserves for itself.
    static let reservedPrefixes = ["sqlite_", "coexist_", "z_"]
    static let reservedNames: Set<String> = ["atransaction", "achange", "atransactionstring"]

    init(model: Model, overrides: SchemaOverrides) {
        self.model = model
        self.overrides = overrides
    }

    mutating func build() throws(SchemaError) {
        let roots = model.entities.filter { $0.superentity == nil }
        for root in roots {
            let name = overrides.entities[root.name]?.table ?? Naming.snakeCase(root.name)
            try claimTable(name, entity: root.name)
            tableNames[root.name] = name
        }
        for root in roots { try buildEntityTable(root) }
        for entity in model.entities { try buildJoinTables(entity) }
        for entity in model.entities where entity.superentity != nil { inheritMappings(entity) }
    }

    private mutating func claimTable(_ name: String, entity: String?) throws(SchemaError) {
        guard SQLIdentifier.isPlain(name) else {
            throw SchemaError(entity: entity, "table name \"\(name)\" is not a plain identifier")
        }
        let lower = name.lowercased()
        if Self.reservedPrefixes.contains(where: { lower.hasPrefix($0) }) || Self.reservedNames.contains(lower) {
            throw SchemaError(
                entity: entity,
                "table name \"\(name)\" is reserved (sqlite_, coexist_, z_ and Core Data's history tables)"
            )
        }
        guard taken.insert(lower).inserted else {
            throw SchemaError(entity: entity, "table name \"\(name)\" is used twice: override one in the configuration")
        }
    }

    private func identity(of root: Entity) throws(SchemaError) -> NewSchema.IdentitySource {
        if let configured = overrides.entities[root.name]?.identity {
            guard let attribute = model.allAttributes(of: root).first(where: { $0.name == configured }) else {
                throw SchemaError(entity: root.name, property: configured, "the identity attribute does not exist")
            }
            switch attribute.type {
            case .uuid: return .uuidAttribute(configured)
            case .string: return .textAttribute(configured)
            default:
                throw SchemaError(
                    entity: root.name,
                    property: configured,
                    "an identity must be a UUID or a String holding one"
                )
            }
        }
        if let id = root.attribute(named: "id"), id.type == .uuid, !id.isTransient { return .uuidAttribute("id") }
        return .generated
    }

    private mutating func buildEntityTable(_ root: Entity) throws(SchemaError) {
        let table = tableNames[root.name] ?? ""
        let identity = try identity(of: root)
        let hierarchy = model.hierarchy(from: root)
        var columns = [
            NewSchema.Column(name: "id", type: "TEXT", check: "length(\"id\") = 36", references: nil, isKey: true)
        ]
        var used: Set<String> = ["id"]
        if hierarchy.count > 1 {
            // Alternatives, not `IN (…)`: SQLite 3.40 checks a list of three or more values through a temporary
            // table made for every row written (`CompanionChanges.createStatements`).
            let names = hierarchy.filter { !$0.isAbstract }.map { "\"kind\" = '\($0.name)'" }.joined(separator: " OR ")
            columns.append(
                NewSchema.Column(
                    name: "kind",
                    type: "TEXT",
                    check: names.isEmpty ? "0" : names,
                    references: nil,
                    isKey: false
                )
            )
            used.insert("kind")
        }
        for entity in hierarchy {
            var properties: [String: NewSchema.PropertyMapping] = [:]
            let entityOverrides = overrides.entities[entity.name]?.columns ?? [:]
            for attribute in entity.attributes where !attribute.isTransient {
                let encoding = ValueEncoding(attribute.type)
                if entity.name == root.name, identity == .uuidAttribute(attribute.name) {
                    properties[attribute.name] = .identity(encoding)
                    continue
                }
                let column = try claimColumn(
                    entityOverrides[attribute.name] ?? Naming.snakeCase(attribute.name),
                    entity,
                    attribute.name,
                    &used
                )
                columns.append(
                    NewSchema.Column(
                        name: column,
                        type: encoding.sqlType,
                        check: encoding.check(SQLIdentifier.quoted(column)),
                        references: nil,
                        isKey: false
                    )
                )
                properties[attribute.name] = .column(column, encoding)
            }
            for relationship in entity.relationships where !relationship.isTransient && !relationship.isToMany {
                guard let destination = model.entity(named: relationship.destination),
                    let destinationTable = tableNames[model.root(of: destination).name]
                else { throw SchemaError(entity: entity.name, property: relationship.name, "destination has no table") }
                let base = entityOverrides[relationship.name] ?? Naming.snakeCase(relationship.name) + "_id"
                let column = try claimColumn(base, entity, relationship.name, &used)
                let inverse = model.inverse(of: relationship)
                columns.append(
                    NewSchema.Column(
                        name: column,
                        type: "TEXT",
                        check: nil,
                        references: (destinationTable, Self.onDelete(inverse)),
                        isKey: false
                    )
                )
                var position: String?
                if let inverse, inverse.isToMany, inverse.isOrdered {
                    let name = try claimColumn(
                        Naming.snakeCase(relationship.name) + "_position",
                        entity,
                        relationship.name,
                        &used
                    )
                    columns.append(
                        NewSchema.Column(name: name, type: "INTEGER", check: nil, references: nil, isKey: false)
                    )
                    position = name
                }
                properties[relationship.name] = .toOne(column: column, position: position)
            }
            entities[entity.name] = NewSchema.EntityMapping(
                entity: entity.name,
                table: table,
                hasKindColumn: hierarchy.count > 1,
                identity: identity,
                properties: properties
            )
        }
        tables.append(NewSchema.Table(name: table, rootEntity: root.name, columns: columns))
    }

    /// The ON DELETE action of a to-one's foreign key: what deleting the destination does to this object,
    /// which is the inverse relationship's delete rule.
    static func onDelete(_ inverse: Relationship?) -> String {
        switch inverse?.deleteRule {
        case .cascade: "CASCADE"
        case .deny: "RESTRICT"
        case .noAction: "NO ACTION"
        case .nullify, nil: "SET NULL"
        }
    }

    private func claimColumn(
        _ base: String,
        _ entity: Entity,
        _ property: String,
        _ used: inout Set<String>
    ) throws(SchemaError) -> String {
        var name = base
        if used.contains(name.lowercased()) { name = base + "_" + Naming.snakeCase(entity.name) }
        var counter = 2
        while used.contains(name.lowercased()) {
            name = base + "_\(counter)"
            counter += 1
        }
        guard SQLIdentifier.isPlain(name) else {
            throw SchemaError(
                entity: entity.name,
                property: property,
                "column name \"\(name)\" is not a plain identifier"
            )
        }
        used.insert(name.lowercased())
        return name
    }

    private mutating func buildJoinTables(_ entity: Entity) throws(SchemaError) {
        for relationship in entity.relationships where !relationship.isTransient && relationship.isToMany {
            let inverse = model.inverse(of: relationship)
            if let inverse, !inverse.isToMany {
                entities[entity.name]?.properties[relationship.name] = .inverse(inverse.name)
                continue
            }
            guard let destination = model.entity(named: relationship.destination) else { continue }
            let mine = entity.name + "." + relationship.name
            let theirs = inverse.map { destination.name + "." + $0.name }
            if let theirs, theirs < mine, theirs != mine { continue }  // the other side builds the table
            let name = Naming.snakeCase(entity.name) + "_" + Naming.snakeCase(relationship.name)
            try claimTable(name, entity: entity.name)
            let sourceTable = tableNames[model.root(of: entity).name] ?? ""
            let targetTable = tableNames[model.root(of: destination).name] ?? ""
            var columns = [
                NewSchema.Column(
                    name: "source_id",
                    type: "TEXT",
                    check: nil,
                    references: (sourceTable, "CASCADE"),
                    isKey: true
                ),
                NewSchema.Column(
                    name: "target_id",
                    type: "TEXT",
                    check: nil,
                    references: (targetTable, "CASCADE"),
                    isKey: true
                ),
            ]
            let reflexive = theirs == mine
            if relationship.isOrdered {
                columns.append(
                    NewSchema.Column(
                        name: "source_position",
                        type: "INTEGER",
                        check: nil,
                        references: nil,
                        isKey: false
                    )
                )
            }
            if let inverse, inverse.isOrdered, !reflexive {
                columns.append(
                    NewSchema.Column(
                        name: "target_position",
                        type: "INTEGER",
                        check: nil,
                        references: nil,
                        isKey: false
                    )
                )
            }
            tables.append(NewSchema.Table(name: name, rootEntity: nil, columns: columns))
            entities[entity.name]?.properties[relationship.name] = .join(
                table: name,
                selfColumn: "source_id",
                otherColumn: "target_id",
                position: relationship.isOrdered ? "source_position" : nil
            )
            if let inverse, !reflexive {
                entities[destination.name]?.properties[inverse.name] = .join(
                    table: name,
                    selfColumn: "target_id",
                    otherColumn: "source_id",
                    position: inverse.isOrdered ? "target_position" : nil
                )
            }
        }
    }

    /// Gives every sub-entity the mappings of the properties it inherits.
    private mutating func inheritMappings(_ entity: Entity) {
        for ancestor in model.ancestry(of: entity).dropFirst() {
            for (name, mapping) in entities[ancestor.name]?.properties ?? [:]
            where entities[entity.name]?.properties[name] == nil {
                entities[entity.name]?.properties[name] = mapping
            }
        }
    }
}
