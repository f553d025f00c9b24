/// Where one entity's rows and properties are stored.
public struct EntityMapping: Sendable, Hashable, Codable {
    /// The entity name.
    public var name: String
    /// `Z_ENT` of this entity.
    public var number: Int
    /// The parent's `Z_ENT`, 0 for a root.
    public var superNumber: Int
    /// The root entity, whose table holds this entity's rows.
    public var rootName: String
    /// The table (`ZTASK`).
    public var table: String
    /// Storage of every stored property, inherited ones included, by property name.
    public var properties: [String: PropertyStorage]
}

/// How one property is stored.
public enum PropertyStorage: Sendable, Hashable, Codable {
    /// An attribute in `column` of the entity's table.
    case attribute(column: String)
    /// A to-one: the destination's `Z_PK` in `column`; `entityColumn` (`Z<N>_<NAME>`) holds the destination's
    /// `Z_ENT` when the destination has sub-entities; `orderColumn` (`Z_FOK_<NAME>`) when the inverse is
    /// an ordered to-many.
    case toOne(column: String, entityColumn: String?, orderColumn: String?)
    /// A to-many kept by the destination's foreign key (the inverse to-one named `inverse`).
    case inverseForeignKey(inverse: String)
    /// A many-to-many in a join table: `sourceColumn` holds this side's `Z_PK`, `destinationColumn` the
    /// other's, `orderColumn` this relationship's order when it is ordered.
    case joinTable(table: String, sourceColumn: String, destinationColumn: String, orderColumn: String?)
    /// A to-many without an inverse: `column` of the destination's `table` (`Z<N><NAME>`) holds the source's
    /// `Z_PK`, a foreign key no entity declares.
    case hiddenForeignKey(table: String, column: String)
    /// A property the store has no column or table for (a model/store mismatch); `reason` says what is missing.
    case unresolved(reason: String)

    /// A short description for reports: `column ZTITLE`, `join table Z_33ASSETS`.
    public var summary: String {
        switch self {
        case .attribute(let column): "column \(column)"
        case .toOne(let column, let entityColumn, _):
            entityColumn.map { "columns \(column), \($0)" } ?? "column \(column)"
        case .inverseForeignKey(let inverse): "inverse foreign key (\(inverse))"
        case .joinTable(let table, _, _, _): "join table \(table)"
        case .hiddenForeignKey(let table, let column): "hidden foreign key \(table).\(column)"
        case .unresolved(let reason): "unresolved: \(reason)"
        }
    }
}
