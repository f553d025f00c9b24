import CoexistLegacyStore
import CoexistModel
import CoexistStore

/// Core Data's derived attributes (`pages.@count`, `now()`, canonical strings…): on the legacy side Core
/// Data's persistent `Z_DA_*` triggers keep them (coredata-sqlite-format.md §1.5), in the app's process or
/// in the bridge's when it mirrors into the legacy tables. The new side has no such triggers: after each
/// mirror the bridge copies the legacy values of the objects whose derived values may have moved — the
/// objects the transaction touched and the objects on either end (before and after) of every relationship
/// it changed, which is where an aggregate over a relationship changes. Attributes the store's own triggers
/// maintain without the model calling them derived (Photos 26.1: `Person.faceCount`) are treated the same.
struct DerivedAttributes {
    /// Derived and trigger-maintained attribute names by entity (inherited ones included); entities without
    /// any are absent.
    let names: [String: [String]]

    /// The model's derived attributes, and `maintained` (``LegacyStore/triggerMaintainedAttributes()``).
    init(model: Model, maintained: [String: [String]] = [:]) {
        var names: [String: [String]] = [:]
        for entity in model.entities {
            let derived = model.allAttributes(of: entity).filter(\.isDerived).map(\.name)
            let all = Set(derived + (maintained[entity.name] ?? []))
            if !all.isEmpty { names[entity.name] = all.sorted() }
        }
        self.names = names
    }

    /// Whether `entity`'s objects (or its sub-entities') have derived values.
    func concerns(_ entity: String) -> Bool { !names.isEmpty && names[entity] != nil }

    /// Gives the new-side rows of `objects` (legacy identities) the legacy side's derived values, through
    /// `update` (a new-side save's), skipping objects gone from either side and values already equal.
    func copy(
        _ objects: Set<ObjectID>,
        engine: SyncEngine,
        update: (ObjectRef, [String: AttributeValue]) throws -> Void
    )
        throws
    {
        for id in objects.sorted(by: { ($0.entity, $0.pk) < ($1.entity, $1.pk) }) {
            guard let object = try engine.legacy.object(id) else { continue }
            let entity = object.id.entity
            guard let derived = names[entity],
                let identity = try engine.identities.recordedID(root: engine.identities.root(of: entity), pk: id.pk)
            else { continue }
            let ref = ObjectRef(entity: entity, id: identity)
            guard let current = try engine.new.values(of: ref) else { continue }
            var changed: [String: AttributeValue] = [:]
            for name in derived where current[name] != (object.attributes[name] ?? .null) {
                changed[name] = object.attributes[name] ?? .null
            }
            if !changed.isEmpty { try update(ref, changed) }
        }
    }
}
