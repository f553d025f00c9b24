import CoexistLegacyStore
import CoexistModel

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

    /// The legacy `Z_PK` of a new-schema object, when the bridge has mirrored it.
    public func legacyPK(ofNew entity: String, id: String) throws -> Int64? {
        try identities.recordedPK(root: identities.root(of: entity), id: id)
    }

    /// The Core Data table of an entity (its root's), nil when unknown.
    public func legacyTable(of entity: String) -> String? { legacy.schema?.entities[entity]?.table }

    /// The new schema's table of an entity, nil when unknown.
    public func newTable(of entity: String) -> String? { new.schema.entities[entity]?.table }
}
