/// The identity of an object in the new schema: its concrete entity and its `id`.
public struct ObjectRef: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The concrete entity name.
    public var entity: String
    /// The identity: a lower-case UUID.
    public var id: String

    /// Creates a reference.
    public init(entity: String, id: String) {
        self.entity = entity
        self.id = id
    }

    public var description: String { "\(entity)/\(id)" }

    /// Hashes the identity alone (identities are UUIDs, unique across entities; the entity only takes part in
    /// `==`): half the text to hash when an identity map grows.
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
}
