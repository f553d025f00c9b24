import CoexistModel
import CoexistStore
import Foundation

extension PersistentModel {
    /// The schema without its root type, for code that handles records of any type: built once per type
    /// (from ``schema``, read then) and kept.
    static var erasedSchema: ErasedSchema {
        let key = ObjectIdentifier(Self.self)
        if let known = ErasedSchemaCache.shared.schema(key) { return known }
        let built = ErasedSchema(schema)
        built.findFieldsAndRelations()
        ErasedSchemaCache.shared.keep(built, key)
        return built
    }
}

/// Erased schemas by record type: each is built once, not at every record a fetch makes. Guarded by an
/// `NSLock` (a pthread mutex, which ThreadSanitizer follows; `Synchronization.Mutex` waits on a futex it
/// cannot see).
private final class ErasedSchemaCache: @unchecked Sendable {
    static let shared = ErasedSchemaCache()
    private let lock = NSLock()
    private var schemas: [ObjectIdentifier: ErasedSchema] = [:]

    func schema(_ key: ObjectIdentifier) -> ErasedSchema? {
        lock.lock()
        defer { lock.unlock() }
        return schemas[key]
    }

    func keep(_ schema: ErasedSchema, _ key: ObjectIdentifier) {
        lock.lock()
        defer { lock.unlock() }
        schemas[key] = schema
    }
}

/// A record type's schema without the type, for code that handles records of any type: immutable once
/// built (closures over key paths), so shared (a class: records and registrations hold it without copying
/// it). Attributes and relationships each have a slot, their position here; a registration's snapshot holds
/// values by slot.
final class ErasedSchema: @unchecked Sendable {
    struct AttributeSlot {
        let name: String
        let read: (AnyObject) -> AttributeValue
        let write: (AnyObject, AttributeValue) -> AttributeValue?
        let convert: (AttributeValue) -> AttributeValue?
        let conversion: AttributeConversion
    }

    struct RelationshipSlot {
        let name: String
        let kind: PropertyKind
        let destination: (any PersistentModel.Type)?
        /// The targets, in order (from the backing data for a relation).
        var read: (AnyObject) -> [AnyObject]
        let write: (AnyObject, [AnyObject]) -> Void
    }

    let entity: String
    /// The record type it was made from.
    let type: ObjectIdentifier
    let keyPaths: [AnyKeyPath: String]
    /// Attribute slots by the key path of their Swift property.
    let attributeSlotsByKeyPath: [AnyKeyPath: Int]
    /// Relationship slots by the key path of their Swift property.
    let relationshipSlotsByKeyPath: [AnyKeyPath: Int]
    let make: () -> AnyObject
    /// The backing data of a record of a ``BackedModel`` type (nil for other types).
    let backing: ((AnyObject) -> BackingData?)?
    /// By attribute slot: whether it is a ``Field`` (kept in the backing data), found by ``findFieldsAndRelations()``
    /// before the schema is shared (all false for a type that is not a ``BackedModel``).
    private(set) var isField: [Bool]
    /// Whether every attribute is a field (and there is at least one).
    private(set) var everyAttributeIsField = false
    /// The attribute slots of fields with the key path their accessor passed at the probe (found by
    /// ``findFieldsAndRelations()``): held, so that no other object can have its identity. A list searched by identity:
    /// comparing a record's few key path addresses costs less than hashing one.
    private var fieldSlotsByIdentity: [(keyPath: AnyKeyPath, slot: Int)] = []
    /// By relationship slot: whether it is a ``Relation`` (kept in the backing data), found by
    /// ``findFieldsAndRelations()`` (all false for a type that is not a ``BackedModel``).
    private(set) var isRelation: [Bool]
    /// Whether every relationship is a relation (or there is none) in a ``BackedModel`` type.
    private(set) var everyRelationshipIsRelation = false
    /// The relationship slots of relations with the key path their accessor passed at the probe.
    private var relationSlotsByIdentity: [(keyPath: AnyKeyPath, slot: Int)] = []
    /// Which attribute and relationship slots of a record type are fields and relations, and the key paths
    /// their accessors passed.
    private let probe: ((ErasedSchema) -> Probed)?
    let attributes: [AttributeSlot]
    /// Those of relations read from the backing data once ``findFieldsAndRelations()`` has found them.
    private(set) var relationships: [RelationshipSlot]
    /// By relationship slot, no target: a snapshot's relationships when the record has none (one array
    /// for every such record).
    let noTargets: [[ObjectRef]]
    /// Slots by property name.
    let attributeSlots: [String: Int]
    let relationshipSlots: [String: Int]

    init<Root>(_ schema: RecordSchema<Root>) {
        entity = schema.entity
        type = ObjectIdentifier(Root.self)
        make = { Root(backingData: BackingData()) }
        if let backed = Root.self as? any BackedModel.Type {
            backing = Self.backingReader(backed)
            probe = Self.fieldProbe(backed)
        } else {
            backing = nil
            probe = nil
        }
        var keyPaths: [AnyKeyPath: String] = [:]
        var slotsByKeyPath: [AnyKeyPath: Int] = [:]
        var relationshipSlotsByKeyPath: [AnyKeyPath: Int] = [:]
        var attributes: [AttributeSlot] = []
        var relationships: [RelationshipSlot] = []
        for property in schema.properties {
            keyPaths[property.keyPath] = property.name
            switch property.kind {
            case .attribute:
                slotsByKeyPath[property.keyPath] = slotsByKeyPath[property.keyPath] ?? attributes.count
                attributes.append(
                    AttributeSlot(
                        name: property.name,
                        read: property.read,
                        write: property.write,
                        convert: property.convert,
                        conversion: property.conversion
                    )
                )
            case .toOne, .toMany:
                relationshipSlotsByKeyPath[property.keyPath] =
                    relationshipSlotsByKeyPath[property.keyPath] ?? relationships.count
                relationships.append(
                    RelationshipSlot(
                        name: property.name,
                        kind: property.kind,
                        destination: property.destination,
                        read: property.readObjects,
                        write: property.writeObjects
                    )
                )
            }
        }
        self.keyPaths = keyPaths
        attributeSlotsByKeyPath = slotsByKeyPath
        self.relationshipSlotsByKeyPath = relationshipSlotsByKeyPath
        isField = Array(repeating: false, count: attributes.count)
        isRelation = Array(repeating: false, count: relationships.count)
        self.attributes = attributes
        self.relationships = relationships
        noTargets = Array(repeating: [], count: relationships.count)
        attributeSlots = Dictionary(attributes.enumerated().map { ($1.name, $0) }) { first, _ in first }
        relationshipSlots = Dictionary(relationships.enumerated().map { ($1.name, $0) }) { first, _ in first }
    }

    /// What a probe of a record type found: its fields and relations, with the key paths their accessors
    /// passed, by slot.
    struct Probed {
        var fields: [Bool]
        var fieldKeyPaths: [Int: AnyKeyPath]
        var relations: [Bool]
        var relationKeyPaths: [Int: AnyKeyPath]
    }

    /// Finds which attributes are ``Field``s and which relationships ``Relation``s (a ``BackedModel`` type's):
    /// once, before the schema is shared. A relation is read from the backing data from then on.
    func findFieldsAndRelations() {
        guard let probe, let backing else { return }
        let found = probe(self)
        isField = found.fields
        everyAttributeIsField = !isField.isEmpty && isField.allSatisfy { $0 }
        fieldSlotsByIdentity = found.fieldKeyPaths.sorted { $0.key < $1.key }.map { ($0.value, $0.key) }
        isRelation = found.relations
        everyRelationshipIsRelation = isRelation.allSatisfy { $0 }
        relationSlotsByIdentity = found.relationKeyPaths.sorted { $0.key < $1.key }.map { ($0.value, $0.key) }
        for slot in relationships.indices where isRelation[slot] {
            let keyPathRead = relationships[slot].read
            relationships[slot].read = { object in backing(object)?.targets(slot) ?? keyPathRead(object) }
        }
    }

    /// The slot of the field whose accessor passes `keyPath`, when it is the object the probe saw; nil
    /// otherwise (the caller looks it up by its components).
    func fieldSlot(byIdentityOf keyPath: AnyKeyPath) -> Int? {
        fieldSlotsByIdentity.first { $0.keyPath === keyPath }?.slot
    }

    /// The slot of the relation whose accessor passes `keyPath`, when it is the object the probe saw.
    func relationSlot(byIdentityOf keyPath: AnyKeyPath) -> Int? {
        relationSlotsByIdentity.first { $0.keyPath === keyPath }?.slot
    }

    private static func backingReader<Root: BackedModel>(_: Root.Type) -> (AnyObject) -> BackingData? {
        { ($0 as? Root)?.persistentBackingData }
    }

    /// The schema being probed, while the probe's record is made (its initializer may use fields).
    @TaskLocal static var probing: ErasedSchema?

    /// Reads each attribute and relationship of a record made for the purpose, its backing data noting the
    /// field or relation each read reaches: an attribute is a field (a relationship a relation) when its own
    /// slot is reached.
    private static func fieldProbe<Root: BackedModel>(_: Root.Type) -> (ErasedSchema) -> Probed {
        { schema in
            let record = $probing.withValue(schema) { Root(backingData: BackingData()) }
            let backing = record.persistentBackingData
            backing.probe(schema)
            defer { backing.reset() }
            // Reads each of `count` slots, noting whether the read reached that very slot (`reached`) and
            // the key path it passed.
            func probe(
                _ count: Int,
                reached: () -> (Int, AnyKeyPath?)?,
                _ read: (Int) -> Void
            ) -> ([Bool], [Int: AnyKeyPath]) {
                var keyPaths: [Int: AnyKeyPath] = [:]
                let found = (0..<count).map { slot in
                    backing.reached = nil
                    backing.reachedRelation = nil
                    backing.reachedKeyPath = nil
                    backing.reachedRelationKeyPath = nil
                    read(slot)
                    guard let (found, keyPath) = reached(), found == slot else { return false }
                    keyPaths[slot] = keyPath
                    return true
                }
                return (found, keyPaths)
            }
            let (fields, fieldKeyPaths) = probe(
                schema.attributes.count,
                reached: { backing.reached.map { ($0, backing.reachedKeyPath) } }
            ) {
                _ = schema.attributes[$0].read(record)
            }
            let (relations, relationKeyPaths) = probe(
                schema.relationships.count,
                reached: { backing.reachedRelation.map { ($0, backing.reachedRelationKeyPath) } }
            ) { _ = schema.relationships[$0].read(record) }
            return Probed(
                fields: fields,
                fieldKeyPaths: fieldKeyPaths,
                relations: relations,
                relationKeyPaths: relationKeyPaths
            )
        }
    }

    /// The kind of the property `name` (nil when the record type does not map it).
    func kind(of name: String) -> PropertyKind? {
        if attributeSlots[name] != nil { return .attribute }
        return relationshipSlots[name].map { relationships[$0].kind }
    }

    /// The attribute slot named `name`.
    func attribute(_ name: String) -> AttributeSlot? { attributeSlots[name].map { attributes[$0] } }

    /// The relationship slot named `name`.
    func relationship(_ name: String) -> RelationshipSlot? { relationshipSlots[name].map { relationships[$0] } }

    /// Every attribute of `object`, by slot.
    func readAttributes(_ object: AnyObject) -> [AttributeValue] { attributes.map { $0.read(object) } }

    /// Attribute values by slot, by name.
    func named(_ values: [AttributeValue]) -> [String: AttributeValue] {
        var named: [String: AttributeValue] = [:]
        named.reserveCapacity(values.count)
        for (slot, value) in zip(attributes, values) { named[slot.name] = value }
        return named
    }
}

/// The erased schema of any record object.
func erasedSchema(of object: AnyObject) -> ErasedSchema? {
    (type(of: object) as? any PersistentModel.Type)?.erasedSchema
}
