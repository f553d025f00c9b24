import CoexistModel
import CoexistStore

extension ModelContext {
    /// What an upsert changed in a registration, to put it back when the save fails.
    struct Adoption {
        let registration: Registration
        let ref: ObjectRef
        let identity: (name: String, value: AttributeValue)?
        let filled: [String]
    }

    /// SwiftData's upsert by uniqueness: a new record whose values for one of its entity's uniqueness
    /// constraints (attributes, the identity included) are those of a stored record of the same entity takes
    /// that record's place: it gets the stored identity, relationships it left empty get the stored ones,
    /// and the save writes what differs from the stored record as an update instead of failing on the
    /// constraint. A stored record another record of the context already stands for is left alone (the save
    /// then fails, naming the constraint). Returns what it changed, for ``undo(_:)`` when the save fails.
    func adoptStoredRecords() throws -> [Adoption] {
        var adoptions: [Adoption] = []
        do {
            try adoptStoredRecords(into: &adoptions)
        } catch {
            undo(adoptions)
            throw error
        }
        return adoptions
    }

    private func adoptStoredRecords(into adoptions: inout [Adoption]) throws {
        for registration in insertionOrder.compactMap({ registrations[$0] })
        where registration.snapshot == nil && !registration.deleted {
            guard let entity = store.model.entity(named: registration.ref.entity) else { continue }
            let owners = store.model.ancestry(of: entity).filter { !$0.uniquenessConstraints.isEmpty }
            guard !owners.isEmpty else { continue }
            let values = registration.schema.named(currentSnapshot(registration).attributes)
            search: for owner in owners {
                for constraint in owner.uniquenessConstraints where !constraint.isEmpty {
                    var key: [String: AttributeValue] = [:]
                    for name in constraint {
                        // A constraint on a relationship, or on a property this record type leaves out.
                        guard let value = values[name] else { break }
                        key[name] = value
                    }
                    guard key.count == constraint.count,
                        let stored = try store.refs(of: owner.name, holding: key).first,
                        stored.entity == registration.ref.entity,
                        byRef[stored].map({ $0 === registration }) ?? true
                    else { continue }
                    if let adoption = try adopt(stored, into: registration) { adoptions.append(adoption) }
                    break search
                }
            }
        }
    }

    /// Makes `registration` stand for the stored record `ref`: its identity attribute takes the stored
    /// identity, its empty relationships the stored ones, and its snapshot is the stored state.
    private func adopt(_ ref: ObjectRef, into registration: Registration) throws -> Adoption? {
        guard let attributes = try store.values(of: ref) else { return nil }
        var identity: (name: String, value: AttributeValue)?
        if let mapping = store.schema.entities[ref.entity] {
            switch mapping.identity {
            case .uuidAttribute(let name), .textAttribute(let name):
                if let attribute = registration.schema.attribute(name) {
                    identity = (name, attribute.read(registration.object))
                    _ = attribute.write(registration.object, attributes[name] ?? .null)
                }
            case .generated:
                break
            }
        }
        let current = currentRelationships(registration)
        var relationships: [[ObjectRef]] = []
        var filled: [String] = []
        for (slot, relationship) in registration.schema.relationships.enumerated() {
            let refs = try store.related(ref, relationship.name)
            relationships.append(refs)
            guard current[slot].isEmpty, !refs.isEmpty else { continue }
            relationship.write(
                registration.object,
                try refs.compactMap { try materialize($0, as: relationship.destination) }
            )
            filled.append(relationship.name)
        }
        let adoption = Adoption(registration: registration, ref: registration.ref, identity: identity, filled: filled)
        forgetRef(of: registration)
        registration.ref = ref
        byRef[ref] = registration
        registration.snapshot = Snapshot(
            attributes: registration.schema.attributes.map { attributes[$0.name] ?? .null },
            relationships: relationships
        )
        return adoption
    }

    /// Puts registrations back as they were before ``adoptStoredRecords()``: a failed save keeps the
    /// context's changes as they were.
    func undo(_ adoptions: [Adoption]) {
        for adoption in adoptions.reversed() {
            let registration = adoption.registration
            forgetRef(of: registration)
            registration.ref = adoption.ref
            if byRef[adoption.ref] == nil { byRef[adoption.ref] = registration }
            registration.snapshot = nil
            if let identity = adoption.identity {
                _ = registration.schema.attribute(identity.name)?.write(registration.object, identity.value)
            }
            for name in adoption.filled { registration.schema.relationship(name)?.write(registration.object, []) }
        }
    }
}
