public import CoexistSQLite

/// A query over one entity's rows written by a caller that translates predicates (the Core Data-shaped
/// adapter): SQL fragments over the entity's root table, aliased `t0`.
///
/// The store adds the entity restriction (`t0.Z_ENT IN (…)` for the entity and, by default, its
/// sub-entities) where the table holds other entities' rows too, and reads the rows (a row of another
/// entity in a table of one entity is refused as damaged). Fragments are SQL: identifiers in them must come
/// from the store's ``StoreSchema`` and be quoted with ``SQLIdentifier/quoted(_:)``; values go in
/// ``arguments``.
public struct ObjectQuery: Sendable {
    /// The entity whose objects are read.
    public var entity: String
    /// Whether objects of sub-entities are included (Core Data's `includesSubentities`).
    public var includesSubentities: Bool
    /// `LEFT JOIN …` clauses after `FROM <root table> t0`, for key paths through to-ones.
    public var joins: [String]
    /// The condition, or nil for every row.
    public var condition: String?
    /// Bound to the `?` placeholders of `joins`, then of `condition`, then of `orderBy`, in that order.
    public var arguments: [SQLiteValue]
    /// ORDER BY terms; `t0.Z_PK` is always appended so the order is total.
    public var orderBy: [String]
    /// At most this many rows (nil for all).
    public var limit: Int?
    /// Rows skipped first.
    public var offset: Int
    /// Unsaved objects selected along with the stored rows (nil: the stored rows alone).
    public var pending: PendingRows?

    /// A query for every object of `entity`.
    public init(
        entity: String,
        includesSubentities: Bool = true,
        joins: [String] = [],
        condition: String? = nil,
        arguments: [SQLiteValue] = [],
        orderBy: [String] = [],
        limit: Int? = nil,
        offset: Int = 0,
        pending: PendingRows? = nil
    ) {
        self.entity = entity
        self.includesSubentities = includesSubentities
        self.joins = joins
        self.condition = condition
        self.arguments = arguments
        self.orderBy = orderBy
        self.limit = limit
        self.offset = offset
        self.pending = pending
    }
}

extension LegacyStore {
    /// Calls `body` with every object `query` selects, in its order; rows are streamed.
    public func forEachObject(_ query: ObjectQuery, _ body: (LegacyObject) throws -> Void) throws {
        try forEachSlottedObject(query) { try body(LegacyObject($0)) }
    }

    /// Calls `body` with every object `query` selects, in its order, its attributes by slot (no dictionary
    /// per row: for a caller that keeps many objects); rows are streamed.
    public func forEachSlottedObject(_ query: ObjectQuery, _ body: (SlottedObject) throws -> Void) throws {
        let (reader, sql, arguments) = try selection(query)
        try connection.forEachRow(sql, arguments) { row in try body(reader.decodeSlotted(row)) }
    }

    /// Calls `body` with every object `query` selects, in its order, its attributes in a block shared with
    /// the other rows (for a caller that keeps many objects: one allocation for many rows' values); rows are
    /// streamed.
    package func forEachBlockObject(_ query: ObjectQuery, _ body: (BlockObject) throws -> Void) throws {
        let (reader, sql, arguments) = try selection(query)
        var blocks = AttributeBlocks()
        try connection.forEachRow(sql, arguments) { row in try body(reader.decode(row, into: &blocks)) }
    }

    /// The row decoder of `query`'s table and the SELECT of every column of the rows `query` selects.
    private func selection(_ query: ObjectQuery) throws -> (RowDecoder, String, [SQLiteValue]) {
        let (model, schema) = try requireModel()
        guard let mapping = schema.entities[query.entity] else {
            throw LegacyStoreError.modelMismatch(path: path, detail: "no entity named \(query.entity)")
        }
        let reader = try rowDecoder(mapping.table, model: model, schema: schema)
        let (sql, arguments) = try statement(query, select: reader.qualifiedSelectList)
        return (reader, sql, arguments)
    }

    /// The identities of the objects `query` selects, in its order, without reading their rows.
    public func objectIDs(_ query: ObjectQuery) throws -> [ObjectID] {
        let (_, schema) = try requireModel()
        guard let mapping = schema.entities[query.entity] else {
            throw LegacyStoreError.modelMismatch(path: path, detail: "no entity named \(query.entity)")
        }
        let (sql, arguments) = try statement(query, select: "t0.Z_PK, t0.Z_ENT")
        var result: [ObjectID] = []
        try connection.forEachRow(sql, arguments) { row in
            result.append(
                try objectID(pk: row.integer(0) ?? 0, entityNumber: row.integer(1), table: mapping.table)
            )
        }
        return result
    }

    /// How many objects `query` selects (its limit and offset applied).
    public func count(_ query: ObjectQuery) throws -> Int {
        var unordered = query
        unordered.orderBy = []
        let (sql, arguments) = try statement(unordered, select: "1", checkingEntities: true)
        return Int(try connection.scalar("SELECT count(*) FROM (\(sql))", arguments).integerValue ?? 0)
    }

    /// The SELECT for `query` with `select` as its result columns, and its arguments. The rows are restricted
    /// to the query's entities by `Z_ENT` unless the table holds the entity alone; `checkingEntities` keeps
    /// the restriction then too (for a caller that decodes no row, so that it counts no damaged one).
    public func statement(
        _ query: ObjectQuery,
        select: String,
        checkingEntities: Bool = false
    ) throws -> (String, [SQLiteValue]) {
        let (model, schema) = try requireModel()
        guard let entity = model.entity(named: query.entity), let mapping = schema.entities[query.entity] else {
            throw LegacyStoreError.modelMismatch(path: path, detail: "no entity named \(query.entity)")
        }
        let members = query.includesSubentities ? model.hierarchy(from: entity) : [entity]
        let numbers = members.compactMap { schema.entities[$0.name]?.number }
        let source = try query.pending.map { try pendingSource(mapping.table, $0) }
        var sql = "SELECT \(select) FROM \(source?.sql ?? SQLIdentifier.quoted(mapping.table)) t0"
        for join in query.joins { sql += " " + join }
        var terms: [String] = []
        // A table that holds the entity alone (a root the model and `Z_PRIMARYKEY` give no sub-entity) needs
        // no restriction by entity, as in Core Data's own SQL: a row of another number there is a damaged
        // row, which decoding refuses.
        let alone =
            !checkingEntities && numbers.count == 1 && mapping.superNumber == 0
            && !schema.parentNumbers.contains(mapping.number)
            && !schema.entities.values.contains { $0.table == mapping.table && $0.name != entity.name }
        if !alone { terms.append("t0.Z_ENT IN (\(numbers.map(String.init).joined(separator: ", ")))") }
        if let condition = query.condition { terms.append("(\(condition))") }
        if !terms.isEmpty { sql += " WHERE " + terms.joined(separator: " AND ") }
        sql += " ORDER BY " + (query.orderBy + ["t0.Z_PK"]).joined(separator: ", ")
        var arguments = (source?.arguments ?? []) + query.arguments
        if query.limit != nil || query.offset > 0 {
            sql += " LIMIT ? OFFSET ?"
            arguments += [.integer(Int64(max(-1, query.limit ?? -1))), .integer(Int64(max(0, query.offset)))]
        }
        return (sql, arguments)
    }
}
