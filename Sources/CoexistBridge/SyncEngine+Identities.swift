public import CoexistLegacyStore
import CoexistModel
public import CoexistStore

/// Identity lookups for the event stream: events name each object by its identity and its legacy `Z_PK`.
extension SyncEngine {
    /// The identity of a legacy object: the recorded one, else its identity attribute's value (when the
    /// object still exists and the schema has one); nil when it has none yet.
    public func identity(ofLegacy entity: String, pk: Int64) throws -> String? {
        try identityRecord(ofLegacy: entity, pk: pk)?.id
    }

    /// The identity of a legacy object as ``identity(ofLegacy:pk:)`` gives it, and whether the bridge has
    /// recorded it. A recorded identity never changes; one read from the object's identity attribute changes
    /// with the attribute until the bridge mirrors the object, on no change of the objects that name it.
    public func identityRecord(ofLegacy entity: String, pk: Int64) throws -> (id: String, isRecorded: Bool)? {
        let root = identities.root(of: entity)
        if let recorded = try identities.recordedID(root: root, pk: pk) { return (recorded, true) }
        guard case .uuidAttribute(let name)? = new.schema.entities[entity]?.identity,
            case .uuid(let bytes)? = try legacy.attributeValue(ObjectID(entity: entity, pk: pk), name),
            let text = UUIDText.text(bytes)
        else { return nil }
        return (text, false)
    }

    /// The identities of the legacy objects `objects`, each as ``identity(ofLegacy:pk:)`` gives it (those
    /// with none are left out): one query per root entity for the recorded ones, one per entity for the
    /// others, however many objects (a transaction's, not a query per change). Roots and entities are read
    /// in the order `objects` first names them.
    public func legacyIdentities(of objects: [ObjectID]) throws -> [ObjectID: String] {
        var found: [ObjectID: String] = [:]
        found.reserveCapacity(objects.count)
        for (root, members) in Self.grouped(objects, by: { identities.root(of: $0.entity) }) {
            let recorded = try identities.recordedIDs(root: root, pks: members.map { $0.pk })
            var unrecorded: [ObjectID] = []
            for object in members {
                if let id = recorded[object.pk] { found[object] = id } else { unrecorded.append(object) }
            }
            for (entity, objects) in Self.grouped(unrecorded, by: \.entity) {
                guard case .uuidAttribute(let name)? = new.schema.entities[entity]?.identity else { continue }
                for (pk, value) in try legacy.attributeValues(entity, name, pks: objects.map { $0.pk }) {
                    guard case .uuid(let bytes) = value, let text = UUIDText.text(bytes) else { continue }
                    found[ObjectID(entity: entity, pk: pk)] = text
                }
            }
        }
        return found
    }

    /// The legacy `Z_PK`s of the new-schema objects `objects`, each as ``legacyPK(ofNew:id:)`` gives it
    /// (those not mirrored are left out): one query per root entity, however many objects, in the order
    /// `objects` first names them.
    public func legacyPKs(ofNew objects: [ObjectRef]) throws -> [ObjectRef: Int64] {
        var found: [ObjectRef: Int64] = [:]
        found.reserveCapacity(objects.count)
        for (root, members) in Self.grouped(objects, by: { identities.root(of: $0.entity) }) {
            let recorded = try identities.recordedPKs(root: root, ids: members.map(\.id))
            for object in members { found[object] = recorded[object.id] }
        }
        return found
    }

    /// `items` grouped by `key`, the groups in the order their first item comes.
    private static func grouped<Item>(_ items: [Item], by key: (Item) -> String) -> [(String, [Item])] {
        var groups: [(String, [Item])] = []
        var positions: [String: Int] = [:]
        for item in items {
            let name = key(item)
            if let position = positions[name] {
                groups[position].1.append(item)
            } else {
                positions[name] = groups.count
                groups.append((name, [item]))
            }
        }
        return groups
    }

    /// The legacy `Z_PK` of a new-schema object, when the bridge has mirrored it.
    public func legacyPK(ofNew entity: String, id: String) throws -> Int64? {
        try identities.recordedPK(root: identities.root(of: entity), id: id)
    }

    /// The Core Data table of an entity (its root's), nil when unknown.
    public func legacyTable(of entity: String) -> String? { legacy.schema?.entities[entity]?.table }

    /// The new schema's table of an entity, nil when unknown.
    public func newTable(of entity: String) -> String? { new.schema.entities[entity]?.table }
}
