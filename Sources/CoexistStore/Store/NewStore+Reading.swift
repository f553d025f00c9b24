public import CoexistModel
public import CoexistSQLite

/// Reading rows and relationships of the new schema.
extension NewStore {
    /// The attribute values of `ref` (inherited ones included), or nil when it does not exist.
    public func values(of ref: ObjectRef) throws -> [String: AttributeValue]? {
        guard let entity = model.entity(named: ref.entity), let mapping = schema.entities[ref.entity] else {
            throw StoreError.mismatch(path: path, detail: "no entity named \(ref.entity)")
        }
        var found: [String: AttributeValue]?
        try connection.forEachRow(
            "SELECT * FROM \(SQLIdentifier.quoted(mapping.table)) WHERE \"id\" = ?",
            [.text(ref.id)]
        ) { row in
            var columns: [String: SQLiteValue] = [:]
            for index in 0..<row.count { columns[row.name(index)] = row[index] }
            found = try decodeAttributes(columns, entity: entity, mapping: mapping, ref: ref)
        }
        return found
    }

    /// What a row of one entity decodes: each stored attribute's column, and the to-ones whose targets the
    /// row alone names (a NULL key, or a destination table without a `kind` column).
    struct ReadPlan {
        var attributes: [(name: String, attribute: Attribute, column: String)] = []
        var toOnes: [(name: String, column: String, destination: String)] = []
    }

    /// The read plan of `entity`, made once.
    func readPlan(_ entity: Entity, _ mapping: NewSchema.EntityMapping) -> ReadPlan {
        if let known = readPlans[entity.name] { return known }
        var plan = ReadPlan()
        for attribute in model.allAttributes(of: entity) where !attribute.isTransient {
            switch mapping.properties[attribute.name] {
            case .column(let column, _): plan.attributes.append((attribute.name, attribute, column))
            case .identity: plan.attributes.append((attribute.name, attribute, "id"))
            default: continue
            }
        }
        for relationship in model.allRelationships(of: entity) where !relationship.isToMany {
            guard case .toOne(let column, _)? = mapping.properties[relationship.name],
                schema.entities[relationship.destination]?.hasKindColumn == false
            else { continue }
            plan.toOnes.append((relationship.name, column, relationship.destination))
        }
        readPlans[entity.name] = plan
        return plan
    }

    /// A decoder of the rows of `entity` (a concrete entity) that a query selected with every column of
    /// its table (`t0.*`) among others: column positions are found by name once, from `row`, the first
    /// row of the query, and every row of that query decodes by position.
    public func rowDecoder(for entity: String, columnsOf row: Row) throws -> RowDecoder {
        guard let found = model.entity(named: entity), let mapping = schema.entities[entity] else {
            throw StoreError.mismatch(path: path, detail: "no entity named \(entity)")
        }
        var positions: [String: Int] = [:]
        for index in 0..<row.count where positions[row.name(index)] == nil { positions[row.name(index)] = index }
        let plan = readPlan(found, mapping)
        return RowDecoder(
            entity: entity,
            path: path,
            table: mapping.table,
            attributeNames: plan.attributes.map(\.name),
            attributes: plan.attributes.map {
                ($0.name, $0.attribute.type, $0.attribute.allowsExternalBinaryDataStorage, positions[$0.column])
            },
            toOneNames: plan.toOnes.map(\.name),
            toOnes: plan.toOnes.map { (positions[$0.column], $0.destination) }
        )
    }

    func decodeAttributes(
        _ columns: [String: SQLiteValue],
        entity: Entity,
        mapping: NewSchema.EntityMapping,
        ref: ObjectRef
    ) throws -> [String: AttributeValue] {
        let plan = readPlan(entity, mapping)
        var values: [String: AttributeValue] = [:]
        values.reserveCapacity(plan.attributes.count)
        for (name, attribute, column) in plan.attributes {
            do {
                values[name] = try NewValueCodec.decode(columns[column] ?? .null, as: attribute)
            } catch {
                throw StoreError.invalidData(path: path, detail: "\(mapping.table) row \(ref.id): \(error)")
            }
        }
        return values
    }

    /// The concrete entity of the row `id` in the table of `rootEntity`, or nil when there is no such row.
    public func entityOfRow(id: String, rootEntity: String) throws -> String? {
        guard let mapping = schema.entities[rootEntity] else { return nil }
        if !mapping.hasKindColumn {
            let exists = try connection.scalar(
                "SELECT 1 FROM \(SQLIdentifier.quoted(mapping.table)) WHERE \"id\" = ?",
                [.text(id)]
            )
            return exists == .null ? nil : rootEntity
        }
        return try connection.scalar(
            "SELECT \"kind\" FROM \(SQLIdentifier.quoted(mapping.table)) WHERE \"id\" = ?",
            [.text(id)]
        ).textValue
    }

    /// The objects `relationship` of `ref` holds, in order for ordered relationships.
    public func related(_ ref: ObjectRef, _ relationship: String) throws -> [ObjectRef] {
        try related([ref], relationship)[ref] ?? []
    }

    /// Every object of `entityName` (and its sub-entities), in insertion order.
    public func refs(of entityName: String) throws -> [ObjectRef] {
        guard let entity = model.entity(named: entityName), let mapping = schema.entities[entityName] else {
            throw StoreError.mismatch(path: path, detail: "no entity named \(entityName)")
        }
        var sql =
            "SELECT \"id\", \(mapping.hasKindColumn ? "\"kind\"" : "NULL") FROM \(SQLIdentifier.quoted(mapping.table))"
        var arguments: [SQLiteValue] = []
        if mapping.hasKindColumn {
            let kinds = model.hierarchy(from: entity).map(\.name)
            sql += " WHERE \"kind\" IN (\(kinds.map { _ in "?" }.joined(separator: ", ")))"
            arguments = kinds.map { .text($0) }
        }
        var result: [ObjectRef] = []
        try connection.forEachRow(sql + " ORDER BY rowid", arguments) { row in
            result.append(ObjectRef(entity: row.text(1) ?? entityName, id: row.text(0) ?? ""))
        }
        return result
    }

    /// The objects of `entityName` (and its sub-entities) whose attributes hold `values`, compared as
    /// stored: who holds the values of a uniqueness constraint. Empty when one of them is NULL (NULLs never
    /// collide in a unique index).
    public func refs(of entityName: String, holding values: [String: AttributeValue]) throws -> [ObjectRef] {
        guard let entity = model.entity(named: entityName), let mapping = schema.entities[entityName] else {
            throw StoreError.mismatch(path: path, detail: "no entity named \(entityName)")
        }
        var conditions: [String] = []
        var arguments: [SQLiteValue] = []
        for (name, value) in values.sorted(by: { $0.key < $1.key }) {
            let column: String
            switch mapping.properties[name] {
            case .column(let name, _)?: column = name
            case .identity?: column = "id"
            default: throw StoreError.mismatch(path: path, detail: "\(entityName) has no stored attribute \(name)")
            }
            guard let attribute = model.allAttributes(of: entity).first(where: { $0.name == name }) else {
                throw StoreError.mismatch(path: path, detail: "\(entityName) has no stored attribute \(name)")
            }
            let stored: SQLiteValue
            do {
                stored = try NewValueCodec.encode(value, as: attribute)
            } catch {
                throw StoreError.validation(path: path, detail: "\(entityName).\(name): \(error)")
            }
            if stored.isNull { return [] }
            conditions.append("\(SQLIdentifier.quoted(column)) = ?")
            arguments.append(stored)
        }
        if mapping.hasKindColumn {
            let kinds = model.hierarchy(from: entity).map(\.name)
            conditions.append("\"kind\" IN (\(kinds.map { _ in "?" }.joined(separator: ", ")))")
            arguments += kinds.map { .text($0) }
        }
        var sql =
            "SELECT \"id\", \(mapping.hasKindColumn ? "\"kind\"" : "NULL") FROM \(SQLIdentifier.quoted(mapping.table))"
        if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
        var result: [ObjectRef] = []
        try connection.forEachRow(sql, arguments) { row in
            result.append(ObjectRef(entity: row.text(1) ?? entityName, id: row.text(0) ?? ""))
        }
        return result
    }
}
