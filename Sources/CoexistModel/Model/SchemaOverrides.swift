/// Names chosen by the operator instead of the default conventions, per entity and attribute.
public struct SchemaOverrides: Sendable, Hashable {
    /// Per-entity overrides.
    public struct Entity: Sendable, Hashable {
        /// The table name (for a root entity) instead of its snake_case name.
        public var table: String?
        /// The attribute whose value is the object's identity (a UUID, or a String holding one) when the
        /// entity has no UUID attribute named `id`.
        public var identity: String?
        /// Column names by property name (attributes and to-one relationships).
        public var columns: [String: String]

        /// Creates overrides.
        public init(table: String? = nil, identity: String? = nil, columns: [String: String] = [:]) {
            self.table = table
            self.identity = identity
            self.columns = columns
        }
    }

    /// Overrides by entity name.
    public var entities: [String: Entity]

    /// Creates overrides.
    public init(entities: [String: Entity] = [:]) { self.entities = entities }
}
