/// A data model: entities with their attributes and relationships, read from an `.xcdatamodeld` or from a
/// store's `Z_MODELCACHE`.
///
/// A `Model` is validated when it is created by a reader (see ``validated(source:)``): every super-entity,
/// destination and inverse exists, inheritance has no cycle, and every name is a plain identifier.
public struct Model: Sendable, Hashable, Codable {
    /// Entities sorted by name.
    public private(set) var entities: [Entity]
    /// The model's version identifiers (`userDefinedModelVersionIdentifier`, `NSStoreModelVersionIdentifiers`).
    public var versionIdentifiers: [String]
    /// Where the model came from: a file path, or a description such as `Z_MODELCACHE of /path/store.sqlite`.
    public var source: String
    private var indexByName: [String: Int]

    /// Creates a model from entities (in any order); call ``validated(source:)`` before trusting it.
    public init(entities: [Entity], versionIdentifiers: [String] = [], source: String = "") {
        self.entities = entities.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        self.versionIdentifiers = versionIdentifiers
        self.source = source
        var index: [String: Int] = [:]
        for (offset, entity) in self.entities.enumerated() { index[entity.name] = offset }
        indexByName = index
    }

    /// The entity named `name`.
    public func entity(named name: String) -> Entity? {
        indexByName[name].map { entities[$0] }
    }

    /// The chain from `entity` up to its root: the entity itself first.
    public func ancestry(of entity: Entity) -> [Entity] {
        var chain = [entity]
        var seen: Set<String> = [entity.name]
        while let parentName = chain[chain.count - 1].superentity, let parent = self.entity(named: parentName),
            seen.insert(parentName).inserted
        {
            chain.append(parent)
        }
        return chain
    }

    /// The root of `entity`'s inheritance tree (the entity itself when it has no super-entity).
    public func root(of entity: Entity) -> Entity { ancestry(of: entity).last ?? entity }

    /// The direct sub-entities of `entity`, sorted by name.
    public func subentities(of entity: Entity) -> [Entity] {
        entities.filter { $0.superentity == entity.name }
    }

    /// `entity` and every entity below it, depth first, siblings by name.
    public func hierarchy(from entity: Entity) -> [Entity] {
        [entity] + subentities(of: entity).flatMap { hierarchy(from: $0) }
    }

    /// Inherited attributes first (root first), then the entity's own.
    public func allAttributes(of entity: Entity) -> [Attribute] {
        ancestry(of: entity).reversed().flatMap(\.attributes)
    }

    /// Inherited relationships first (root first), then the entity's own.
    public func allRelationships(of entity: Entity) -> [Relationship] {
        ancestry(of: entity).reversed().flatMap(\.relationships)
    }

    /// The inverse of `relationship`, declared on its destination or one of the destination's ancestors.
    public func inverse(of relationship: Relationship) -> Relationship? {
        guard let inverseName = relationship.inverse, let destination = entity(named: relationship.destination)
        else { return nil }
        return allRelationships(of: destination).first { $0.name == inverseName }
    }

    /// Entity numbers as Core Data assigns them to a new store: a depth-first pre-order walk of the
    /// inheritance forest, roots and siblings sorted by name, starting at 1 (coredata-sqlite-format.md §1.2,
    /// [Inferred]). Existing stores carry their own numbers in `Z_PRIMARYKEY`: read those instead.
    public func defaultEntityNumbers() -> [String: Int] {
        var numbers: [String: Int] = [:]
        for root in entities where root.superentity == nil {
            for entity in hierarchy(from: root) { numbers[entity.name] = numbers.count + 1 }
        }
        return numbers
    }
}
