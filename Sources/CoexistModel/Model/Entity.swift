/// An entity: a named record type, possibly inheriting from a super-entity.
///
/// ``attributes`` and ``relationships`` hold only the entity's *own* properties; inherited ones are found
/// through ``Model/allAttributes(of:)`` and ``Model/allRelationships(of:)``.
public struct Entity: Sendable, Hashable, Codable {
    /// The entity name (`Task`).
    public var name: String
    /// The super-entity's name, nil for a root entity.
    public var superentity: String?
    /// Abstract entities have no instances of their own.
    public var isAbstract: Bool
    /// The class name the app uses, when the model names one.
    public var className: String?
    /// Own attributes, in model order.
    public var attributes: [Attribute]
    /// Own relationships, in model order.
    public var relationships: [Relationship]
    /// Uniqueness constraints: each a list of property names that together must be unique.
    public var uniquenessConstraints: [[String]]
    /// Compound and fetch indexes declared on the entity.
    public var indexes: [Index]
    /// The name the entity had before a rename (`elementID` in XML, `NSRenamingIdentifier` in archives);
    /// stores migrated by Core Data keep the old name in `Z_PRIMARYKEY`.
    public var renamingIdentifier: String?

    /// Creates an entity.
    public init(
        name: String,
        superentity: String? = nil,
        isAbstract: Bool = false,
        className: String? = nil,
        attributes: [Attribute] = [],
        relationships: [Relationship] = [],
        uniquenessConstraints: [[String]] = [],
        indexes: [Index] = [],
        renamingIdentifier: String? = nil
    ) {
        self.name = name
        self.superentity = superentity
        self.isAbstract = isAbstract
        self.className = className
        self.attributes = attributes
        self.relationships = relationships
        self.uniquenessConstraints = uniquenessConstraints
        self.indexes = indexes
        self.renamingIdentifier = renamingIdentifier
    }

    /// The own attribute named `name`.
    public func attribute(named name: String) -> Attribute? { attributes.first { $0.name == name } }

    /// The own relationship named `name`.
    public func relationship(named name: String) -> Relationship? { relationships.first { $0.name == name } }
}

/// An index the model asks for: a compound index or a fetch index.
public struct Index: Sendable, Hashable, Codable {
    /// The index name, for fetch indexes that have one.
    public var name: String?
    /// The indexed properties, in order.
    public var elements: [Element]

    /// One indexed property.
    public struct Element: Sendable, Hashable, Codable {
        /// The property name.
        public var property: String
        /// Ascending (true) or descending order.
        public var ascending: Bool

        /// Creates an element.
        public init(property: String, ascending: Bool = true) {
            self.property = property
            self.ascending = ascending
        }
    }

    /// Creates an index.
    public init(name: String? = nil, elements: [Element]) {
        self.name = name
        self.elements = elements
    }
}
