import CoexistModel
import CoexistStore

extension ModelContext {
    /// SwiftData's upsert by uniqueness: a new record whose values for one of its entity's uniqueness
    /// constraints (attributes only) are those of a stored record of the same entity takes that record's
    /// place: it gets the stored identity, and the save writes what differs from the stored record as an
    /// update, instead of failing on the constraint. A stored record another record of the context already
    /// stands for is left alone (the save then fails, naming the constraint).
    func adoptStoredRecords() throws {
        for registration in insertionOrder.compactMap({ registrations[$0] })
        where registration.snapshot == nil && !registration.deleted {
            guard let entity = store.model.entity(named: registration.ref.entity) else { continue }
            let values = currentSnapshot(registration).attributes
            search: for owner in store.model.ancestry(of: entity) {
                for constraint in owner.uniquenessConstraints where !constraint.isEmpty {
                    var key: [String: AttributeValue] = [:]
                    for name in constraint {
                        guard let value = values[name] else { continue search }
                        key[name] = value
                    }
                    guard let stored = try store.refs(of: owner.name, holding: key).first,
                        stored.entity == registration.ref.entity, byRef[stored] == nil
                    else { continue }
                    try adopt(stored, into: registration)
                    break search
                }
            }
        }
    }

    /// Makes `registration` stand for the stored record `ref`: its identity attribute takes the stored
    /// identity, and its snapshot is the stored state, so that the save writes only what differs.
    private func adopt(_ ref: ObjectRef, into registration: Registration) throws {
        guard let attributes = try store.values(of: ref) else { return }
        if let mapping = store.schema.entities[ref.entity] {
            switch mapping.identity {
            case .uuidAttribute(let name), .textAttribute(let name):
                _ = registration.schema.writeAttribute[name]?(registration.object, attributes[name] ?? .null)
            case .generated:
                break
            }
        }
        var relationships: [String: [ObjectRef]] = [:]
        for name in registration.schema.writeObjects.keys { relationships[name] = try store.related(ref, name) }
        byRef[registration.ref] = nil
        registration.ref = ref
        byRef[ref] = ObjectIdentifier(registration.object)
        registration.snapshot = Snapshot(attributes: attributes, relationships: relationships)
    }
}
