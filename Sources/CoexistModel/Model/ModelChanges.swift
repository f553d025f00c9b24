/// What changes from one model version to the next, and whether Core Data could infer the migration
/// (lightweight) or needs a mapping model, with the reasons.
///
/// Entities and properties of the destination are matched to the source by their renaming identifier
/// (`elementID` in the model file: the source name), else by name, as Core Data's inferred mapping does.
/// What lightweight migration handles, from Apple's "Migrating your data model automatically" and the
/// Core Data Model Versioning guide: adding and removing attributes, relationships and entities; renaming
/// them through renaming identifiers; a non-optional attribute becoming optional; an optional one becoming
/// non-optional when it has a default; to-one ↔ to-many and unordered ↔ ordered; new parent or child
/// entities, properties moving along the hierarchy, entities moving out of one. Not inferable: changing an
/// attribute's type, a relationship's destination, merging two hierarchies (entities that shared no root
/// sharing one), and a non-optional attribute added (or made non-optional) without a default value, which
/// existing rows could not fill.
public struct ModelChanges: Sendable {
    /// One change, named in the destination's terms (the source name where it differs).
    public enum Change: Sendable, Hashable, CustomStringConvertible {
        case entityAdded(String)
        case entityRemoved(String)
        case entityRenamed(from: String, to: String)
        case parentChanged(entity: String, from: String?, to: String?)
        case abstractChanged(entity: String, isAbstract: Bool)
        case attributeAdded(entity: String, name: String, isOptional: Bool, hasDefault: Bool)
        case attributeRemoved(entity: String, name: String)
        case attributeRenamed(entity: String, from: String, to: String)
        case attributeTypeChanged(entity: String, name: String, from: AttributeType, to: AttributeType)
        case optionalityChanged(entity: String, name: String, isOptional: Bool, hasDefault: Bool)
        case defaultChanged(entity: String, name: String)
        case relationshipAdded(entity: String, name: String)
        case relationshipRemoved(entity: String, name: String)
        case relationshipRenamed(entity: String, from: String, to: String)
        case relationshipChanged(entity: String, name: String, detail: String)
        case uniquenessChanged(entity: String, from: [[String]], to: [[String]])

        public var description: String {
            switch self {
            case .entityAdded(let name): "entity \(name) added"
            case .entityRemoved(let name): "entity \(name) removed"
            case .entityRenamed(let from, let to): "entity \(from) renamed to \(to)"
            case .parentChanged(let entity, let from, let to):
                "entity \(entity): parent \(from ?? "none") → \(to ?? "none")"
            case .abstractChanged(let entity, let isAbstract):
                "entity \(entity) \(isAbstract ? "becomes abstract" : "is no longer abstract")"
            case .attributeAdded(let entity, let name, let isOptional, let hasDefault):
                "\(entity).\(name) added (\(isOptional ? "optional" : "non-optional")\(hasDefault ? ", with a default" : ""))"
            case .attributeRemoved(let entity, let name): "\(entity).\(name) removed"
            case .attributeRenamed(let entity, let from, let to): "\(entity).\(from) renamed to \(to)"
            case .attributeTypeChanged(let entity, let name, let from, let to):
                "\(entity).\(name): type \(from.xmlName) → \(to.xmlName)"
            case .optionalityChanged(let entity, let name, let isOptional, let hasDefault):
                "\(entity).\(name) becomes \(isOptional ? "optional" : "non-optional")\(!isOptional && hasDefault ? " (with a default)" : "")"
            case .defaultChanged(let entity, let name): "\(entity).\(name): default value changed"
            case .relationshipAdded(let entity, let name): "\(entity).\(name) (relationship) added"
            case .relationshipRemoved(let entity, let name): "\(entity).\(name) (relationship) removed"
            case .relationshipRenamed(let entity, let from, let to): "\(entity).\(from) (relationship) renamed to \(to)"
            case .relationshipChanged(let entity, let name, let detail): "\(entity).\(name): \(detail)"
            case .uniquenessChanged(let entity, let from, let to):
                "\(entity): uniqueness constraints \(Self.constraints(from)) → \(Self.constraints(to))"
            }
        }

        private static func constraints(_ list: [[String]]) -> String {
            list.isEmpty ? "none" : list.map { "(" + $0.joined(separator: ", ") + ")" }.joined(separator: " ")
        }
    }

    /// The changes, entity by entity in the destination's order, then the removed entities.
    public var changes: [Change]
    /// Why Core Data could not infer the migration (empty: lightweight).
    public var reasons: [String]
    /// Whether Core Data could infer the migration: no mapping model needed.
    public var isLightweight: Bool { reasons.isEmpty }
    /// For each destination entity, the source entity it comes from (nil: new).
    public var entitySources: [String: String?]

    /// The changes from `source` to `destination`.
    public init(from source: Model, to destination: Model) {
        var changes: [Change] = []
        var reasons: [String] = []
        var sources: [String: String?] = [:]
        var matched: Set<String> = []
        for entity in destination.entities {
            let origin =
                source.entity(named: entity.renamingIdentifier ?? entity.name)
                ?? source.entity(named: entity.name)
            sources[entity.name] = origin?.name
            guard let origin else {
                changes.append(.entityAdded(entity.name))
                continue
            }
            matched.insert(origin.name)
            if origin.name != entity.name { changes.append(.entityRenamed(from: origin.name, to: entity.name)) }
            Self.compareEntity(origin, entity, source, destination, &changes, &reasons)
        }
        for entity in source.entities where !matched.contains(entity.name) {
            changes.append(.entityRemoved(entity.name))
        }
        Self.checkHierarchies(source, destination, sources, &reasons)
        self.changes = changes
        self.reasons = reasons
        entitySources = sources
    }

    private static func compareEntity(
        _ origin: Entity,
        _ entity: Entity,
        _ source: Model,
        _ destination: Model,
        _ changes: inout [Change],
        _ reasons: inout [String]
    ) {
        let name = entity.name
        let oldParent = origin.superentity
        // The destination's parent, in source names, to compare like with like.
        let newParent = entity.superentity.map { parent in
            destination.entity(named: parent).flatMap { $0.renamingIdentifier } ?? parent
        }
        if oldParent != newParent {
            changes.append(.parentChanged(entity: name, from: oldParent, to: entity.superentity))
        }
        if origin.isAbstract != entity.isAbstract {
            changes.append(.abstractChanged(entity: name, isAbstract: entity.isAbstract))
        }
        // Properties along the hierarchy: moving one up or down keeps it.
        let oldAttributes = source.allAttributes(of: origin).filter { !$0.isTransient }
        let newAttributes = destination.allAttributes(of: entity).filter { !$0.isTransient }
        // A change is said once, on the entity that declares the property (sub-entities inherit it).
        let declared = Set(entity.attributes.map(\.name) + entity.relationships.map(\.name))
        let declaredBefore = Set(origin.attributes.map(\.name) + origin.relationships.map(\.name))
        var seen: Set<String> = []
        for attribute in newAttributes {
            guard declared.contains(attribute.name) else {
                seen.insert(attribute.renamingIdentifier ?? attribute.name)
                seen.insert(attribute.name)
                continue
            }
            guard
                let old = Self.origin(
                    of: attribute.name,
                    renamed: attribute.renamingIdentifier,
                    in: oldAttributes,
                    \.name
                )
            else {
                let hasDefault = attribute.defaultValue != nil
                changes.append(
                    .attributeAdded(
                        entity: name,
                        name: attribute.name,
                        isOptional: attribute.isOptional,
                        hasDefault: hasDefault
                    )
                )
                if !attribute.isOptional && !hasDefault && !attribute.isDerived {
                    reasons.append(
                        "\(name).\(attribute.name) is added non-optional without a default: existing rows have no value"
                    )
                }
                continue
            }
            seen.insert(old.name)
            if old.name != attribute.name {
                changes.append(.attributeRenamed(entity: name, from: old.name, to: attribute.name))
            }
            if old.type != attribute.type {
                changes.append(
                    .attributeTypeChanged(entity: name, name: attribute.name, from: old.type, to: attribute.type)
                )
                reasons.append(
                    "\(name).\(attribute.name) changes type (\(old.type.xmlName) → \(attribute.type.xmlName)): Core Data does not infer a conversion"
                )
            }
            if old.isOptional != attribute.isOptional {
                let hasDefault = attribute.defaultValue != nil
                changes.append(
                    .optionalityChanged(
                        entity: name,
                        name: attribute.name,
                        isOptional: attribute.isOptional,
                        hasDefault: hasDefault
                    )
                )
                if !attribute.isOptional && !hasDefault {
                    reasons.append(
                        "\(name).\(attribute.name) becomes non-optional without a default: rows without a value cannot migrate"
                    )
                }
            }
            if old.defaultValue != attribute.defaultValue {
                changes.append(.defaultChanged(entity: name, name: attribute.name))
            }
        }
        for old in oldAttributes where !seen.contains(old.name) && declaredBefore.contains(old.name) {
            changes.append(.attributeRemoved(entity: name, name: old.name))
        }
        let oldLinks = source.allRelationships(of: origin).filter { !$0.isTransient }
        let newLinks = destination.allRelationships(of: entity).filter { !$0.isTransient }
        var seenLinks: Set<String> = []
        for link in newLinks {
            guard declared.contains(link.name) else {
                seenLinks.insert(link.renamingIdentifier ?? link.name)
                seenLinks.insert(link.name)
                continue
            }
            guard let old = Self.origin(of: link.name, renamed: link.renamingIdentifier, in: oldLinks, \.name) else {
                changes.append(.relationshipAdded(entity: name, name: link.name))
                continue
            }
            seenLinks.insert(old.name)
            if old.name != link.name {
                changes.append(.relationshipRenamed(entity: name, from: old.name, to: link.name))
            }
            let newDestination =
                destination.entity(named: link.destination).flatMap { $0.renamingIdentifier }
                ?? link.destination
            var details: [String] = []
            if old.destination != newDestination {
                details.append("destination \(old.destination) → \(link.destination)")
                reasons.append(
                    "\(name).\(link.name) points to another entity (\(old.destination) → \(link.destination))"
                )
            }
            if old.isToMany != link.isToMany { details.append(link.isToMany ? "to-one → to-many" : "to-many → to-one") }
            if old.isOrdered != link.isOrdered {
                details.append(link.isOrdered ? "becomes ordered" : "becomes unordered")
            }
            if old.deleteRule != link.deleteRule {
                details.append("delete rule \(old.deleteRule.xmlName) → \(link.deleteRule.xmlName)")
            }
            if old.isOptional != link.isOptional {
                details.append(link.isOptional ? "becomes optional" : "becomes non-optional")
            }
            changes += details.map { .relationshipChanged(entity: name, name: link.name, detail: $0) }
        }
        for old in oldLinks where !seenLinks.contains(old.name) && declaredBefore.contains(old.name) {
            changes.append(.relationshipRemoved(entity: name, name: old.name))
        }
        // Constraints in force: the entity's own and its ancestors'.
        let before = source.ancestry(of: origin).flatMap(\.uniquenessConstraints).filter { !$0.isEmpty }
        let after = destination.ancestry(of: entity).flatMap(\.uniquenessConstraints).filter { !$0.isEmpty }
        if Set(before.map { Set($0) }) != Set(after.map { Set($0) }) {
            changes.append(.uniquenessChanged(entity: name, from: before, to: after))
        }
    }

    /// The stored attribute of source entity `entity` (and its ancestors) that destination attribute
    /// `attribute` comes from: the one its renaming identifier names, else the one of the same name; nil
    /// when it is new.
    public static func origin(of attribute: Attribute, in entity: Entity, of source: Model) -> Attribute? {
        let candidates = source.allAttributes(of: entity).filter { !$0.isTransient }
        return origin(of: attribute.name, renamed: attribute.renamingIdentifier, in: candidates, \.name)
    }

    /// The stored relationship of source entity `entity` (and its ancestors) that destination relationship
    /// `relationship` comes from; nil when it is new.
    public static func origin(of relationship: Relationship, in entity: Entity, of source: Model) -> Relationship? {
        let candidates = source.allRelationships(of: entity).filter { !$0.isTransient }
        return origin(of: relationship.name, renamed: relationship.renamingIdentifier, in: candidates, \.name)
    }

    /// The source property a destination property comes from: the one its renaming identifier names, else
    /// the one of the same name.
    private static func origin<P>(of name: String, renamed: String?, in old: [P], _ key: KeyPath<P, String>) -> P? {
        old.first { $0[keyPath: key] == (renamed ?? name) } ?? old.first { $0[keyPath: key] == name }
    }

    /// Two destination entities that share a root, coming from source entities that shared none, merge two
    /// hierarchies: Core Data does not infer that.
    private static func checkHierarchies(
        _ source: Model,
        _ destination: Model,
        _ sources: [String: String?],
        _ reasons: inout [String]
    ) {
        var rootsByDestinationRoot: [String: Set<String>] = [:]
        for entity in destination.entities {
            guard case let origin?? = sources[entity.name], let old = source.entity(named: origin) else { continue }
            rootsByDestinationRoot[destination.root(of: entity).name, default: []].insert(source.root(of: old).name)
        }
        for (root, origins) in rootsByDestinationRoot.sorted(by: { $0.key < $1.key }) where origins.count > 1 {
            reasons.append(
                "the hierarchy of \(root) merges entities of separate hierarchies (\(origins.sorted().joined(separator: ", ")))"
            )
        }
    }
}
