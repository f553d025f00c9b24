public import CoexistModel
import CoexistSQLite

/// Reading objects and relationships (coredata-sqlite-format.md §1).
extension LegacyStore {
    /// Calls `body` with every object of `entityName` (and, by default, its sub-entities), in `Z_PK` order.
    ///
    /// Rows are streamed: memory stays bounded whatever the table's size. Throws
    /// ``LegacyStoreError/invalidData(path:detail:)`` naming table, row, column and attribute for a value that
    /// does not fit its type, and for a `Z_ENT` the store does not define.
    public func forEachObject(
        of entityName: String,
        includingSubentities: Bool = true,
        _ body: (LegacyObject) throws -> Void
    ) throws {
        let (model, schema) = try requireModel()
        guard let entity = model.entity(named: entityName), let mapping = schema.entities[entityName] else {
            throw LegacyStoreError.modelMismatch(path: path, detail: "no entity named \(entityName)")
        }
        let members = includingSubentities ? model.hierarchy(from: entity) : [entity]
        let numbers = members.compactMap { schema.entities[$0.name]?.number }
        let reader = try rowDecoder(mapping.table, model: model, schema: schema)
        let placeholders = numbers.map { _ in "?" }.joined(separator: ", ")
        let sql =
            "SELECT \(reader.selectList) FROM \(SQLIdentifier.quoted(mapping.table)) WHERE Z_ENT IN (\(placeholders)) ORDER BY Z_PK"
        try connection.forEachRow(sql, numbers.map { .integer(Int64($0)) }) { row in
            try body(reader.decode(row))
        }
    }

    /// Every object of `entityName` and its sub-entities, in `Z_PK` order.
    public func objects(of entityName: String, includingSubentities: Bool = true) throws -> [LegacyObject] {
        var result: [LegacyObject] = []
        try forEachObject(of: entityName, includingSubentities: includingSubentities) { result.append($0) }
        return result
    }

    /// The object with identity `id`, or nil when no row has that key.
    public func object(_ id: ObjectID) throws -> LegacyObject? { try slottedObject(id).map(LegacyObject.init) }

    /// The object with identity `id`, its attributes by slot, or nil when no row has that key.
    public func slottedObject(_ id: ObjectID) throws -> SlottedObject? {
        let reader = try decoder(of: id)
        var found: SlottedObject?
        try connection.forEachRow(reader.selectByKey, [.integer(id.pk)]) { row in found = try reader.decodeSlotted(row)
        }
        return found
    }

    /// The object with identity `id`, its attributes in a block of their own, or nil when no row has that key.
    package func blockObject(_ id: ObjectID) throws -> BlockObject? {
        let reader = try decoder(of: id)
        var blocks = AttributeBlocks(exact: true)
        var found: BlockObject?
        try connection.forEachRow(reader.selectByKey, [.integer(id.pk)]) { row in
            found = try reader.decode(row, into: &blocks)
        }
        return found
    }

    /// The row decoder of the table holding `id`'s row.
    private func decoder(of id: ObjectID) throws -> RowDecoder {
        let (model, schema) = try requireModel()
        guard let mapping = schema.entities[id.entity] else {
            throw LegacyStoreError.modelMismatch(path: path, detail: "no entity named \(id.entity)")
        }
        return try rowDecoder(mapping.table, model: model, schema: schema)
    }

    /// The value of one attribute of the object `id` (one column read), or nil when no row has that key.
    public func attributeValue(_ id: ObjectID, _ name: String) throws -> AttributeValue? {
        let stored = try storedAttribute(id.entity, name)
        var found: AttributeValue?
        try connection.forEachRow(
            "SELECT \(SQLIdentifier.quoted(stored.column)) FROM \(SQLIdentifier.quoted(stored.table)) WHERE Z_PK = ?",
            [.integer(id.pk)]
        ) { row in found = try decode(row[0], of: stored, pk: id.pk) }
        return found
    }

    /// The stored attribute `name` of the objects `pks` of `entity`, by `Z_PK`, as ``attributeValue(_:_:)``
    /// reads each (rows that do not exist are left out): one query, however many.
    public func attributeValues(_ entity: String, _ name: String, pks: [Int64]) throws -> [Int64: AttributeValue] {
        let stored = try storedAttribute(entity, name)
        var found: [Int64: AttributeValue] = [:]
        guard !pks.isEmpty else { return found }
        found.reserveCapacity(pks.count)
        try connection.forEachRow(
            "SELECT Z_PK, \(SQLIdentifier.quoted(stored.column)) FROM \(SQLIdentifier.quoted(stored.table)) "
                + "WHERE Z_PK IN (SELECT value FROM json_each(?))",
            [.text(JSONText.integers(pks))]
        ) { row in
            let pk = row.int64(0)
            found[pk] = try decode(row[1], of: stored, pk: pk)
        }
        return found
    }

    /// Where a stored attribute is, and its definition.
    private struct StoredAttribute {
        let entity: String
        let table: String
        let column: String
        let attribute: Attribute
    }

    /// Where the stored attribute `name` of `entity` is, and its definition; a model mismatch when the entity
    /// stores no such attribute.
    private func storedAttribute(_ entity: String, _ name: String) throws -> StoredAttribute {
        let (model, schema) = try requireModel()
        guard let mapping = schema.entities[entity], let definition = model.entity(named: entity),
            let attribute = model.allAttributes(of: definition).first(where: { $0.name == name }),
            case .attribute(let column)? = mapping.properties[name]
        else {
            throw LegacyStoreError.modelMismatch(path: path, detail: "\(entity) has no stored attribute \(name)")
        }
        return StoredAttribute(entity: entity, table: mapping.table, column: column, attribute: attribute)
    }

    /// `value`, read from the row `pk` for `stored`, decoded; invalid data naming table, row, column and
    /// attribute when it does not fit.
    private func decode(
        _ value: SQLiteValue,
        of stored: StoredAttribute,
        pk: Int64
    ) throws -> AttributeValue {
        do {
            return try AttributeCodec.decode(value, as: stored.attribute)
        } catch {
            throw LegacyStoreError.invalidData(
                path: path,
                detail:
                    "\(stored.table) row Z_PK=\(pk) column \(stored.column) (\(stored.entity).\(stored.attribute.name)): \(error)"
            )
        }
    }

    /// The objects of `entityName` (and its sub-entities) whose attributes hold `values`, compared as stored:
    /// who holds the values of a uniqueness constraint. Empty when one of them is NULL (NULLs never collide
    /// in a unique index).
    public func objects(of entityName: String, holding values: [String: AttributeValue]) throws -> [ObjectID] {
        let (model, schema) = try requireModel()
        guard let entity = model.entity(named: entityName), let mapping = schema.entities[entityName] else {
            throw LegacyStoreError.modelMismatch(path: path, detail: "no entity named \(entityName)")
        }
        let numbers = model.hierarchy(from: entity).compactMap { schema.entities[$0.name]?.number }
        var conditions = ["Z_ENT IN (\(numbers.map(String.init).joined(separator: ", ")))"]
        var arguments: [SQLiteValue] = []
        for (name, value) in values.sorted(by: { $0.key < $1.key }) {
            guard let attribute = model.allAttributes(of: entity).first(where: { $0.name == name }),
                case .attribute(let column)? = mapping.properties[name]
            else {
                throw LegacyStoreError.modelMismatch(
                    path: path,
                    detail: "\(entityName) has no stored attribute \(name)"
                )
            }
            let stored: SQLiteValue
            do {
                stored = try AttributeCodec.encode(value, as: attribute)
            } catch {
                throw LegacyStoreError.validation(path: path, detail: "\(entityName).\(name): \(error)")
            }
            if stored.isNull { return [] }
            conditions.append("\(SQLIdentifier.quoted(column)) = ?")
            arguments.append(stored)
        }
        var result: [ObjectID] = []
        try connection.forEachRow(
            "SELECT Z_PK, Z_ENT FROM \(SQLIdentifier.quoted(mapping.table)) WHERE "
                + conditions.joined(separator: " AND "),
            arguments
        ) { row in
            let number = Int(row.integer(1) ?? 0)
            result.append(
                ObjectID(entity: schema.entity(number: number)?.name ?? entityName, pk: row.integer(0) ?? 0)
            )
        }
        return result
    }

    /// The decoder of `table`'s rows, cached until the store's tables change.
    func rowDecoder(_ table: String, model: Model, schema: StoreSchema) throws(LegacyStoreError) -> RowDecoder {
        if let cached = rowDecoders[table] { return cached }
        let decoder = try RowDecoder(store: self, model: model, schema: schema, table: table)
        rowDecoders[table] = decoder
        return decoder
    }

    /// The objects `relationship` of `id` holds, in the relationship's order when it is ordered.
    public func related(_ id: ObjectID, _ relationship: String) throws -> [ObjectID] {
        let (sql, destinationTable) = try relatedQuery(id, relationship)
        var result: [ObjectID] = []
        try connection.forEachRow(sql, [.integer(id.pk)]) { row in
            result.append(
                try objectID(pk: row.integer(0) ?? 0, entityNumber: row.integer(1), table: destinationTable)
            )
        }
        return result
    }

    /// How many objects `relationship` of `id` holds, counted by SQLite without reading them.
    public func relatedCount(_ id: ObjectID, _ relationship: String) throws -> Int {
        let (sql, _) = try relatedQuery(id, relationship)
        return Int(try connection.scalar("SELECT count(*) FROM (\(sql))", [.integer(id.pk)]).integerValue ?? 0)
    }

    /// The query of the objects `relationship` of `id` holds (`Z_PK`, `Z_ENT`; the owner's key bound as its
    /// one argument), and the destination's table.
    private func relatedQuery(_ id: ObjectID, _ relationship: String) throws -> (String, String) {
        let (_, schema) = try requireModel()
        guard let storage = schema.entities[id.entity]?.properties[relationship] else {
            throw LegacyStoreError.modelMismatch(path: path, detail: "\(id.entity) has no relationship \(relationship)")
        }
        let destinationTable = try relationshipDestinationTable(id.entity, relationship)
        let quotedDestination = SQLIdentifier.quoted(destinationTable)
        let sql: String
        switch storage {
        case .toOne(let column, _, _):
            sql =
                "SELECT d.Z_PK, d.Z_ENT FROM \(quotedDestination) d JOIN \(SQLIdentifier.quoted(schema.entities[id.entity]?.table ?? "")) s "
                + "ON d.Z_PK = s.\(SQLIdentifier.quoted(column)) WHERE s.Z_PK = ?"
        case .inverseForeignKey(let inverse):
            guard let destination = relationshipDestination(id.entity, relationship),
                case .toOne(let column, _, let order) = schema.entities[destination]?.properties[inverse]
            else {
                throw LegacyStoreError.modelMismatch(
                    path: path,
                    detail: "\(id.entity).\(relationship): inverse not stored"
                )
            }
            let orderBy = order.map { "\(SQLIdentifier.quoted($0)), Z_PK" } ?? "Z_PK"
            sql =
                "SELECT Z_PK, Z_ENT FROM \(quotedDestination) WHERE \(SQLIdentifier.quoted(column)) = ? ORDER BY \(orderBy)"
        case .hiddenForeignKey(let table, let column):
            sql =
                "SELECT Z_PK, Z_ENT FROM \(SQLIdentifier.quoted(table)) WHERE \(SQLIdentifier.quoted(column)) = ? ORDER BY Z_PK"
        case .joinTable(let table, let source, let destination, let order):
            let orderBy = order.map { "j.\(SQLIdentifier.quoted($0)), d.Z_PK" } ?? "d.Z_PK"
            if destination == "REFLEXIVE" {
                sql =
                    "SELECT d.Z_PK, d.Z_ENT FROM \(quotedDestination) d WHERE d.Z_PK IN ("
                    + "SELECT REFLEXIVE FROM \(SQLIdentifier.quoted(table)) WHERE \(SQLIdentifier.quoted(source)) = ?1 UNION "
                    + "SELECT \(SQLIdentifier.quoted(source)) FROM \(SQLIdentifier.quoted(table)) WHERE REFLEXIVE = ?1) ORDER BY d.Z_PK"
            } else {
                sql =
                    "SELECT d.Z_PK, d.Z_ENT FROM \(SQLIdentifier.quoted(table)) j JOIN \(quotedDestination) d "
                    + "ON d.Z_PK = j.\(SQLIdentifier.quoted(destination)) WHERE j.\(SQLIdentifier.quoted(source)) = ? ORDER BY \(orderBy)"
            }
        case .attribute, .unresolved:
            throw LegacyStoreError.modelMismatch(
                path: path,
                detail: "\(id.entity).\(relationship) is not a stored relationship"
            )
        }
        return (sql, destinationTable)
    }

    func requireModel() throws(LegacyStoreError) -> (Model, StoreSchema) {
        guard let model, let schema else {
            throw .modelMismatch(path: path, detail: "the store has no Z_MODELCACHE and no model was given")
        }
        return (model, schema)
    }

    func objectID(pk: Int64, entityNumber: Int64?, table: String) throws(LegacyStoreError) -> ObjectID {
        guard let number = entityNumber, let mapping = schema?.entity(number: Int(number)), mapping.table == table
        else {
            throw .invalidData(
                path: path,
                detail:
                    "\(table) row Z_PK=\(pk): Z_ENT \(entityNumber.map(String.init) ?? "NULL") is not an entity of the model stored in \(table)"
            )
        }
        return ObjectID(entity: mapping.name, pk: pk)
    }

    private func relationshipDestination(_ entity: String, _ relationship: String) -> String? {
        guard let model, let owner = model.entity(named: entity) else { return nil }
        return model.allRelationships(of: owner).first { $0.name == relationship }?.destination
    }

    private func relationshipDestinationTable(
        _ entity: String,
        _ relationship: String
    ) throws(LegacyStoreError) -> String {
        guard let destination = relationshipDestination(entity, relationship),
            let table = schema?.entities[destination]?.table
        else {
            throw .modelMismatch(path: path, detail: "\(entity) has no relationship \(relationship)")
        }
        return table
    }
}
