import CoexistLegacyStore
import CoexistModel

/// Identity lookups for the event stream: events name each object by its identity and its legacy `Z_PK`.
extension SyncEngine {
    /// The identity of a legacy object: the recorded one, else its identity attribute's value (when the
    /// object still exists and the schema has one); nil when it has none yet.
    public func identity(ofLegacy entity: String, pk: Int64) throws -> String? {
        let root = identities.root(of: entity)
        if let recorded = try identities.recordedID(root: root, pk: pk) { return recorded }
        guard case .uuidAttribute(let name)? = new.schema.entities[entity]?.identity,
            case .uuid(let bytes)? = try legacy.attributeValue(ObjectID(entity: entity, pk: pk), name)
        else { return nil }
        return UUIDText.text(bytes)
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
