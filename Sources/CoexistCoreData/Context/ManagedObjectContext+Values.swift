import CoexistLegacyStore
import CoexistModel

/// Key-value access on behalf of ``ManagedObject``: faults, attributes, relationships.
extension ManagedObjectContext {
    func attribute(_ entity: String, _ key: String) -> Attribute? { properties[entity]?.attributes[key] }

    func relationship(_ entity: String, _ key: String) -> Relationship? { properties[entity]?.relationships[key] }

    /// Loads a fault's stored values (its batch's, when it came from a batched fetch).
    func fulfill(_ object: ManagedObject) throws(CoreDataError) {
        guard object.snapshot == nil, !object.isInserted, let pk = object.objectID.pk else { return }
        if let batch = object.batch {
            try batch.load(containing: object, in: self)
            if object.snapshot != nil { return }
        }
        let stored: BlockObject?
        do {
            stored = try store.blockObject(ObjectID(entity: object.entity, pk: pk))
        } catch {
            throw .store("\(error)")
        }
        guard let stored else { throw .objectNotFound("\(object.objectID)") }
        fill(object, from: stored)
    }

    /// Gives `object` the stored state `stored`, its values left in their block (shared with the other rows
    /// of a fetch, or its own for a row read alone); `isOfObjectEntity`: whether the row is of the object's
    /// own entity, when the caller knows.
    func fill(_ object: ManagedObject, from stored: BlockObject, isOfObjectEntity: Bool? = nil) {
        object.snapshot = ManagedObject.Snapshot(
            version: stored.version,
            slots: stored.slots,
            block: stored.block,
            base: stored.base,
            toOne: stored.toOne.isEmpty ? .init() : stored.toOne.mapValues(identity),
            isOfObjectEntity: isOfObjectEntity ?? (stored.id.entity == object.entity)
        )
        if object.batch != nil { object.batch = nil }
    }

    func value(of object: ManagedObject, _ key: String) throws(CoreDataError) -> Any? {
        if object.pending[key] != nil { return object.pendingValue(key) }
        if let attribute = attribute(object.entity, key), attribute.isTransient {
            return ValueBridge.value(object.transients[key] ?? attribute.defaultValue?.value ?? .null, attribute)
        }
        if let attribute = attribute(object.entity, key) {
            if object.isInserted { return ValueBridge.value(attribute.defaultValue?.value ?? .null, attribute) }
            try fulfill(object)
            return ValueBridge.value(object.snapshot?.attribute(key) ?? .null, attribute)
        }
        guard let relationship = relationship(object.entity, key) else {
            throw .unknownKey(entity: object.entity, key: key)
        }
        if object.isInserted {
            guard relationship.isToMany else { return nil }
            return relationship.isOrdered ? [ManagedObject]() as Any : Set<ManagedObject>() as Any
        }
        try fulfill(object)
        if !relationship.isToMany {
            return object.snapshot?.toOne[key].map { self.object(with: $0) }
        }
        let ids = try related(object, key)
        let objects = ids.map { self.object(with: $0) }.filter { !$0.isDeleted }
        return relationship.isOrdered ? objects as Any : Set(objects) as Any
    }

    /// The stored members of a to-many, read once per snapshot.
    func related(_ object: ManagedObject, _ key: String) throws(CoreDataError) -> [ManagedObjectID] {
        if let known = object.snapshot?.toMany[key] { return known }
        guard let pk = object.objectID.pk else { return [] }
        let ids: [ManagedObjectID]
        do {
            ids = try store.related(ObjectID(entity: object.entity, pk: pk), key).map(identity)
        } catch {
            throw .store("\(error)")
        }
        object.snapshot?.toMany[key] = ids
        return ids
    }

    func set(_ value: Any?, of object: ManagedObject, _ key: String) throws(CoreDataError) {
        if !object.isInserted { try fulfill(object) }
        if let attribute = attribute(object.entity, key) {
            guard !attribute.isDerived else {
                throw .validation(object: "\(object.objectID)", key: key, reason: "derived: the store maintains it")
            }
            guard let stored = ValueBridge.stored(value, attribute) else {
                throw .validation(
                    object: "\(object.objectID)",
                    key: key,
                    reason: "\(type(of: value as Any)) is not a value of a \(attribute.type.xmlName) attribute"
                )
            }
            // A transient value is the object's own, in memory: no change for the store to take.
            if attribute.isTransient {
                object.transients[key] = stored
            } else {
                object.pending[key] = .attribute(stored)
            }
            return
        }
        guard let relationship = relationship(object.entity, key) else {
            throw .unknownKey(entity: object.entity, key: key)
        }
        if !relationship.isToMany {
            guard value == nil || value is ManagedObject else {
                throw .validation(object: "\(object.objectID)", key: key, reason: "a to-one holds one object or nil")
            }
            let target = value as? ManagedObject
            try check(target.map { [$0] } ?? [], of: relationship, object, key)
            let previous = try members(object, key)
            object.pending[key] = .toOne(target)
            maintainInverse(
                of: object,
                relationship,
                removed: previous.filter { $0 !== target },
                added: target.map { [$0] }?.filter { new in !previous.contains { $0 === new } } ?? []
            )
            return
        }
        let members: [ManagedObject]
        switch value {
        case nil: members = []
        case let list as [ManagedObject]: members = list
        case let set as Set<ManagedObject>: members = set.sorted { "\($0.objectID)" < "\($1.objectID)" }
        default:
            throw .validation(
                object: "\(object.objectID)",
                key: key,
                reason: "a to-many holds a Set or an array of objects"
            )
        }
        try check(members, of: relationship, object, key)
        // The members stored now are what a store-wins save compares with to see another writer's change.
        if !object.isInserted { _ = try related(object, key) }
        let previous = try self.members(object, key)
        object.pending[key] = .toMany(members)
        // By identity sets: comparing each member with each was quadratic in the members set at once.
        let kept = Set(members.map(ObjectIdentifier.init))
        let held = Set(previous.map(ObjectIdentifier.init))
        maintainInverse(
            of: object,
            relationship,
            removed: previous.filter { !kept.contains(ObjectIdentifier($0)) },
            added: members.filter { !held.contains(ObjectIdentifier($0)) }
        )
    }

    // MARK: Inverses

    /// The objects `key` of `object` holds now (unsaved changes included), as a list.
    func members(_ object: ManagedObject, _ key: String) throws(CoreDataError) -> [ManagedObject] {
        // Unsaved members as they are held (deleted ones left out, as a read leaves them out): building a set
        // and sorting it by identity text at every member added made adding many objects to one owner
        // quadratic in text formatting.
        switch object.pending[key] {
        case .toMany(let list)?: return list.filter { !$0.isDeleted }
        case .toOne(let target)?: return target.map { $0.isDeleted ? [] : [$0] } ?? []
        case .attribute?, nil: break
        }
        return switch try value(of: object, key) {
        case let set as Set<ManagedObject>: set.sorted { "\($0.objectID)" < "\($1.objectID)" }
        case let list as [ManagedObject]: list
        case let one as ManagedObject: [one]
        default: []
        }
    }

    /// Keeps the other side of `relationship` in step with what `object` now holds, as Core Data maintains
    /// inverses: objects `object` let go of drop it, objects it took hold of hold it, and an object that
    /// can belong to one owner only leaves its previous owner. Those objects then have unsaved changes too.
    /// An object that cannot be read (another writer deleted it) is left alone: the save's checks meet it.
    private func maintainInverse(
        of object: ManagedObject,
        _ relationship: Relationship,
        removed: [ManagedObject],
        added: [ManagedObject]
    ) {
        guard let inverseName = relationship.inverse else { return }
        for target in removed where !target.isDeleted {
            guard let inverse = self.relationship(target.entity, inverseName),
                let current = try? members(target, inverseName)
            else { continue }
            if inverse.isToMany {
                try? setMembers(target, inverse, current.filter { $0 !== object })
            } else if current.first === object {
                target.pending[inverseName] = .toOne(nil)
            }
        }
        for target in added where !target.isDeleted {
            guard let inverse = self.relationship(target.entity, inverseName),
                let current = try? members(target, inverseName)
            else { continue }
            if inverse.isToMany {
                if !current.contains(where: { $0 === object }) { try? setMembers(target, inverse, current + [object]) }
                continue
            }
            // The target belongs to one owner: its previous one lets go of it.
            if let previous = current.first, previous !== object, !previous.isDeleted {
                if relationship.isToMany {
                    if let held = try? members(previous, relationship.name) {
                        try? setMembers(previous, relationship, held.filter { $0 !== target })
                    }
                } else {
                    previous.pending[relationship.name] = .toOne(nil)
                }
            }
            target.pending[inverseName] = .toOne(object)
        }
    }

    /// Sets a to-many's members on the inverse side, recording its stored members first (see ``set(_:of:_:)``).
    private func setMembers(
        _ object: ManagedObject,
        _ relationship: Relationship,
        _ members: [ManagedObject]
    ) throws(CoreDataError) {
        if !object.isInserted { _ = try related(object, relationship.name) }
        object.pending[relationship.name] = .toMany(members)
    }

    private func check(
        _ targets: [ManagedObject],
        of relationship: Relationship,
        _ object: ManagedObject,
        _ key: String
    ) throws(CoreDataError) {
        guard let destination = model.entity(named: relationship.destination) else { return }
        let allowed = Set(model.hierarchy(from: destination).map(\.name))
        for target in targets {
            guard target.managedObjectContext === self else {
                throw .validation(
                    object: "\(object.objectID)",
                    key: key,
                    reason: "\(target.objectID) is in another context"
                )
            }
            guard allowed.contains(target.entity) else {
                throw .validation(
                    object: "\(object.objectID)",
                    key: key,
                    reason: "\(target.objectID) is not a \(relationship.destination)"
                )
            }
        }
    }
}

/// One entity's attributes and relationships, inherited ones included, by name.
struct EntityProperties {
    var attributes: [String: Attribute] = [:]
    var relationships: [String: Relationship] = [:]

    /// The properties of every entity of `model`, by entity name.
    static func index(_ model: Model) -> [String: EntityProperties] {
        var index: [String: EntityProperties] = [:]
        for entity in model.entities {
            var properties = EntityProperties()
            // The first of a name wins (inherited ones come first), as a search of the model's lists finds.
            for attribute in model.allAttributes(of: entity) where properties.attributes[attribute.name] == nil {
                properties.attributes[attribute.name] = attribute
            }
            for relationship in model.allRelationships(of: entity)
            where properties.relationships[relationship.name] == nil {
                properties.relationships[relationship.name] = relationship
            }
            index[entity.name] = properties
        }
        return index
    }
}
