public import CoexistModel

/// The identity of a stored object: its concrete entity and its `Z_PK` in the root entity's table.
public struct ObjectID: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The concrete entity name (from the row's `Z_ENT`).
    public var entity: String
    /// `Z_PK`.
    public var pk: Int64

    /// Creates an identity.
    public init(entity: String, pk: Int64) {
        self.entity = entity
        self.pk = pk
    }

    /// `Entity/p<pk>`, as in Core Data's object URIs.
    public var description: String { "\(entity)/p\(pk)" }
}

/// One object read from a Core Data store: identity, version, attributes and to-one relationships.
///
/// To-many relationships are not loaded with the object: ask ``LegacyStore/related(_:_:)``.
public struct LegacyObject: Sendable, Hashable {
    /// The object's identity.
    public var id: ObjectID
    /// `Z_OPT`, the optimistic-locking version (1 after insert, +1 per update).
    public var version: Int64
    /// Every stored attribute, inherited ones included, by name (`.null` when unset).
    public var attributes: [String: AttributeValue]
    /// Every to-one relationship that is set, by name.
    public var toOne: [String: ObjectID]

    /// Creates an object.
    public init(id: ObjectID, version: Int64, attributes: [String: AttributeValue], toOne: [String: ObjectID]) {
        self.id = id
        self.version = version
        self.attributes = attributes
        self.toOne = toOne
    }
}
