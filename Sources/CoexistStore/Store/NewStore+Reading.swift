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

    /// The attribute values of `ref` from a row that selected every column of its entity's table (`t0.*`),
    /// named as the table names them, and the to-ones the row alone answers (as ``related(_:_:)`` would):
    /// what those reads give, without a query of their own.
    public func values(
        of ref: ObjectRef,
        in row: Row
    ) throws -> (attributes: [String: AttributeValue], toOnes: [String: [ObjectRef]]) {
        guard let entity = model.entity(named: ref.entity), let mapping = schema.entities[ref.entity] else {
            throw StoreError.mismatch(path: path, detail: "no entity named \(ref.entity)")
        }
        var columns: [String: SQLiteValue] = [:]
        columns.reserveCapacity(row.count)
        for index in 0..<row.count { columns[row.name(index)] = row[index] }
        var toOnes: [String: [ObjectRef]] = [:]
        for (name, column, destination) in readPlan(entity, mapping).toOnes {
            toOnes[name] = columns[column]?.textValue.map { [ObjectRef(entity: destination, id: $0)] } ?? []
        }
        return (try decodeAttributes(columns, entity: entity, mapping: mapping, ref: ref), toOnes)
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
        guard let entity = model.entity(named: ref.entity), let mapping = schema.entities[ref.entity],
            let definition = model.allRelationships(of: entity).first(where: { $0.name == relationship }),
            let destination = model.entity(named: definition.destination),
            let destinationMapping = schema.entities[destination.name]
        else { throw StoreError.mismatch(path: path, detail: "\(ref.entity) has no relationship \(relationship)") }
        let quoted = SQLIdentifier.quoted
        let destinationTable = quoted(destinationMapping.table)
        let kind = destinationMapping.hasKindColumn ? "d.\"kind\"" : "NULL"
        let sql: String
        switch mapping.properties[relationship] {
        case .toOne(let column, _):
            sql =
                "SELECT d.\"id\", \(kind) FROM \(destinationTable) d JOIN \(quoted(mapping.table)) s "
                + "ON d.\"id\" = s.\(quoted(column)) WHERE s.\"id\" = ?"
        case .inverse(let inverse):
            guard case .toOne(let column, let position) = destinationMapping.properties[inverse] else {
                throw StoreError.mismatch(
                    path: path,
                    detail: "\(ref.entity).\(relationship): inverse \(inverse) is not a to-one"
                )
            }
            let order = position.map { "d.\(quoted($0)), " } ?? ""
            sql =
                "SELECT d.\"id\", \(kind) FROM \(destinationTable) d WHERE d.\(quoted(column)) = ? ORDER BY \(order)d.rowid"
        case .join(let table, let selfColumn, let otherColumn, let position):
            let order = position.map { "j.\(quoted($0)), " } ?? ""
            sql =
                "SELECT d.\"id\", \(kind) FROM \(quoted(table)) j JOIN \(destinationTable) d ON d.\"id\" = j.\(quoted(otherColumn)) "
                + "WHERE j.\(quoted(selfColumn)) = ? ORDER BY \(order)d.rowid"
        default:
            throw StoreError.mismatch(path: path, detail: "\(ref.entity).\(relationship) is not a relationship")
        }
        var result: [ObjectRef] = []
        try connection.forEachRow(sql, [.text(ref.id)]) { row in
            result.append(ObjectRef(entity: row[1].textValue ?? destination.name, id: row[0].textValue ?? ""))
        }
        return result
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
            result.append(ObjectRef(entity: row[1].textValue ?? entityName, id: row[0].textValue ?? ""))
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
            result.append(ObjectRef(entity: row[1].textValue ?? entityName, id: row[0].textValue ?? ""))
        }
        return result
    }
}
