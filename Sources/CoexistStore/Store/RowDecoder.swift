public import CoexistModel
public import CoexistSQLite

/// Decodes the rows of one query for one concrete entity by column position (``NewStore/rowDecoder(for:columnsOf:)``
/// finds the positions once): what ``NewStore/values(of:)`` and ``NewStore/related(_:_:)`` would read for
/// the row's attributes and the to-ones the row alone answers, without a dictionary per row. Immutable (a
/// class, so that every row of a query shares one without copying it).
public final class RowDecoder {
    /// The concrete entity whose rows it decodes.
    public let entity: String
    let path: String
    let table: String
    /// The entity's stored attributes (inherited ones included), in the order ``attributes(of:id:)`` gives
    /// their values.
    public let attributeNames: [String]
    let attributes: [(name: String, type: AttributeType, external: Bool, position: Int?)]
    /// The to-ones whose targets the row alone names (a NULL key, or a destination table without a `kind`
    /// column), in the order ``toOnes(of:)`` gives them.
    public let toOneNames: [String]
    let toOnes: [(position: Int?, destination: String)]
    /// What ``toOnes(of:)`` gives for a row that names no target: made once, shared by those rows.
    private let noTargets: [[ObjectRef]]

    init(
        entity: String,
        path: String,
        table: String,
        attributeNames: [String],
        attributes: [(name: String, type: AttributeType, external: Bool, position: Int?)],
        toOneNames: [String],
        toOnes: [(position: Int?, destination: String)]
    ) {
        self.entity = entity
        self.path = path
        self.table = table
        self.attributeNames = attributeNames
        self.attributes = attributes
        self.toOneNames = toOneNames
        self.toOnes = toOnes
        noTargets = Array(repeating: [], count: toOnes.count)
    }

    /// The attribute values of the row `id`, in the order of ``attributeNames``.
    public func attributes(of row: Row, id: String) throws -> [AttributeValue] {
        var values: [AttributeValue] = []
        values.reserveCapacity(attributes.count)
        for index in attributes.indices { values.append(try attribute(at: index, of: row, id: id)) }
        return values
    }

    /// The values of the attributes at `indices` of ``attributeNames`` in the row `id`, in the order of
    /// `indices`.
    public func attributes(of row: Row, id: String, at indices: [Int]) throws -> [AttributeValue] {
        var values: [AttributeValue] = []
        values.reserveCapacity(indices.count)
        for index in indices { values.append(try attribute(at: index, of: row, id: id)) }
        return values
    }

    /// The value of the attribute at `index` of ``attributeNames`` in the row `id`.
    public func attribute(at index: Int, of row: Row, id: String) throws -> AttributeValue {
        let (name, type, external, position) = attributes[index]
        // A UUID is read from the column's bytes, without a string made first.
        if type == .uuid, let position, let parsed = row.withText(position, UUIDText.bytes(utf8:)), let bytes = parsed {
            return .uuid(bytes)
        }
        guard let position else { return .null }
        do {
            return try NewValueCodec.decode(row, at: position, type: type, name: name, external: external)
        } catch {
            throw StoreError.invalidData(path: path, detail: "\(table) row \(id): \(error)")
        }
    }

    /// The targets of the to-ones the row names, in the order of ``toOneNames`` (empty for a NULL key).
    public func toOnes(of row: Row) -> [[ObjectRef]] {
        // Most rows name none: they share one value instead of an array each.
        guard toOnes.contains(where: { $0.position.map { !row.isNull($0) } ?? false }) else { return noTargets }
        return toOnes.map { position, destination in
            position.flatMap(row.text).map { [ObjectRef(entity: destination, id: $0)] } ?? []
        }
    }
}
