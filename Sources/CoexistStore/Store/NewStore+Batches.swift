public import CoexistSQLite

/// Reading many objects' rows and relationships with one query per chunk of identities, for contexts that
/// load a level of a graph at once rather than a query per object.
extension NewStore {
    /// Identities per statement: far below SQLite's limit on bound parameters.
    static let batchSize = 512

    /// A chunk's identities as arguments, padded with NULLs (which `IN` never matches) to a power of two:
    /// chunks of any size share ten statement shapes, so the connection's statement cache stays small.
    static func padded(_ chunk: ArraySlice<String>) -> (placeholders: String, arguments: [SQLiteValue]) {
        var size = 1
        while size < chunk.count { size *= 2 }
        let arguments = chunk.map { SQLiteValue.text($0) } + Array(repeating: .null, count: size - chunk.count)
        return (Array(repeating: "?", count: size).joined(separator: ", "), arguments)
    }

    /// The objects `relationship` holds for each of `refs` (of entities that have it), by owner (as given),
    /// each in order for ordered relationships (as ``related(_:_:)`` gives them); owners holding none are
    /// left out. Owners of different entities may share an identity: each is answered for its own.
    public func related(_ refs: [ObjectRef], _ relationship: String) throws -> [ObjectRef: [ObjectRef]] {
        var result: [ObjectRef: [ObjectRef]] = [:]
        try forEachChunk(of: refs) { entityName, placeholders, arguments in
            let (sql, destination) = try relatedQuery(entityName, relationship, owners: placeholders)
            try connection.forEachRow(sql, arguments) { row in
                guard let owner = row.text(0) else { return }
                let target = ObjectRef(entity: row.text(2) ?? destination, id: row.text(1) ?? "")
                result[ObjectRef(entity: entityName, id: owner), default: []].append(target)
            }
        }
        return result
    }

    /// How many objects `relationship` holds for each of `refs` (owners holding none are left out): one
    /// counting query per entity and chunk, reading no member.
    public func relatedCounts(_ refs: [ObjectRef], _ relationship: String) throws -> [ObjectRef: Int] {
        var result: [ObjectRef: Int] = [:]
        try forEachChunk(of: refs) { entityName, placeholders, arguments in
            let (sql, _) = try relatedQuery(entityName, relationship, owners: placeholders)
            try connection.forEachRow("SELECT owner, count(*) FROM (\(sql)) GROUP BY owner", arguments) { row in
                guard let owner = row.text(0) else { return }
                result[ObjectRef(entity: entityName, id: owner)] = Int(row.integer(1) ?? 0)
            }
        }
        return result
    }

    /// Calls `body` with each entity of `refs` and a chunk of its identities (placeholders and arguments,
    /// ``padded(_:)``), entities in name order.
    private func forEachChunk(
        of refs: [ObjectRef],
        _ body: (String, String, [SQLiteValue]) throws -> Void
    ) throws {
        var byEntity: [String: [String]] = [:]
        for ref in refs { byEntity[ref.entity, default: []].append(ref.id) }
        for (entityName, ids) in byEntity.sorted(by: { $0.key < $1.key }) {
            for start in stride(from: 0, to: ids.count, by: Self.batchSize) {
                let (placeholders, arguments) = Self.padded(ids[start..<min(ids.count, start + Self.batchSize)])
                try body(entityName, placeholders, arguments)
            }
        }
    }

    /// The query of `relationship` of `entityName` (owner identity, named `owner`; target identity; target
    /// kind) for the owners `IN (owners)` (a chunk's placeholders); and the destination entity.
    private func relatedQuery(
        _ entityName: String,
        _ relationship: String,
        owners: String
    ) throws -> (String, String) {
        guard let entity = model.entity(named: entityName), let mapping = schema.entities[entityName],
            let definition = model.allRelationships(of: entity).first(where: { $0.name == relationship }),
            let destination = model.entity(named: definition.destination),
            let destinationMapping = schema.entities[destination.name]
        else {
            throw StoreError.mismatch(path: path, detail: "\(entityName) has no relationship \(relationship)")
        }
        let quoted = SQLIdentifier.quoted
        let destinationTable = quoted(destinationMapping.table)
        let kind = destinationMapping.hasKindColumn ? "d.\"kind\"" : "NULL"
        switch mapping.properties[relationship] {
        case .toOne(let column, _):
            return (
                "SELECT s.\"id\" AS owner, d.\"id\", \(kind) FROM \(destinationTable) d JOIN \(quoted(mapping.table)) s "
                    + "ON d.\"id\" = s.\(quoted(column)) WHERE s.\"id\" IN (\(owners))",
                destination.name
            )
        case .inverse(let inverse):
            guard case .toOne(let column, let position) = destinationMapping.properties[inverse] else {
                throw StoreError.mismatch(
                    path: path,
                    detail: "\(entityName).\(relationship): inverse \(inverse) is not a to-one"
                )
            }
            let order = position.map { "d.\(quoted($0)), " } ?? ""
            return (
                "SELECT d.\(quoted(column)) AS owner, d.\"id\", \(kind) FROM \(destinationTable) d "
                    + "WHERE d.\(quoted(column)) IN (\(owners)) ORDER BY \(order)d.rowid",
                destination.name
            )
        case .join(let table, let selfColumn, let otherColumn, let position):
            let order = position.map { "j.\(quoted($0)), " } ?? ""
            return (
                "SELECT j.\(quoted(selfColumn)) AS owner, d.\"id\", \(kind) FROM \(quoted(table)) j JOIN \(destinationTable) d "
                    + "ON d.\"id\" = j.\(quoted(otherColumn)) WHERE j.\(quoted(selfColumn)) IN (\(owners)) "
                    + "ORDER BY \(order)d.rowid",
                destination.name
            )
        default:
            throw StoreError.mismatch(path: path, detail: "\(entityName).\(relationship) is not a relationship")
        }
    }

    /// Calls `body` with the row of each of `refs` that exists (every column of its table after its identity
    /// and kind, as a fetch selects them: `t0."id", kind, t0.*`), a query per table and chunk, with the
    /// row's reference (its concrete entity from the row's kind, else as given).
    public func forEachRow(of refs: [ObjectRef], _ body: (ObjectRef, Row) throws -> Void) throws {
        // By table: identities are unique within one (entities sharing it are one hierarchy), not across.
        var byTable: [String: (mapping: NewSchema.EntityMapping, ids: [String], given: [String: ObjectRef])] = [:]
        for ref in refs {
            guard let mapping = schema.entities[ref.entity] else {
                throw StoreError.mismatch(path: path, detail: "no entity named \(ref.entity)")
            }
            byTable[mapping.table, default: (mapping, [], [:])].ids.append(ref.id)
            byTable[mapping.table]?.given[ref.id] = ref
        }
        for (table, group) in byTable.sorted(by: { $0.key < $1.key }) {
            let kind = group.mapping.hasKindColumn ? "t0.\"kind\"" : "NULL"
            for start in stride(from: 0, to: group.ids.count, by: Self.batchSize) {
                let chunk = group.ids[start..<min(group.ids.count, start + Self.batchSize)]
                let (placeholders, arguments) = Self.padded(chunk)
                let sql =
                    "SELECT t0.\"id\", \(kind), t0.* FROM \(SQLIdentifier.quoted(table)) t0 "
                    + "WHERE t0.\"id\" IN (\(placeholders)) ORDER BY t0.rowid"
                try connection.forEachRow(sql, arguments) { row in
                    guard let id = row.text(0), let ref = group.given[id] else { return }
                    try body(row.text(1).map { ObjectRef(entity: $0, id: id) } ?? ref, row)
                }
            }
        }
    }
}
