import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistStore

/// Mirrors a snapshot of legacy transactions (one or more, in token order) into the new schema in one
/// new-side save, making every object they touched equal to its current legacy state.
///
/// Order: deletes first (a value an object gave up may be taken by another in the same snapshot), then
/// the unique values that move are freed (``UniqueValues``), then objects inserted (attributes), then
/// updated attributes, then relationships (so that every object they point to exists), then derived values.
/// An object the transactions refer to that the new side does not hold yet (one written before the bridge
/// ran, say) is copied on demand: nothing is lost.
struct LegacyToNew {
    let engine: SyncEngine
    let conflicts: ConflictResolver
    /// Whether the snapshot's inserts and attribute updates are written set-based where they can be
    /// (``SetInserts``, ``SetUpdates``).
    var setBased = false

    var model: Model { engine.new.model }

    func mirror(_ transactions: [HistoryTransaction], _ metadata: SaveMetadata) throws -> Int64? {
        var plan = MirrorPlan<ObjectID>()
        for (token, change) in MirrorPlan<ObjectID>.changes(of: transactions) {
            switch change.type {
            case .delete: plan.deletes.append(change)
            case .insert: if let id = try objectID(change) { plan.insert(id) }
            case .update:
                guard let id = try objectID(change) else { continue }
                guard let properties = change.properties else {
                    throw BridgeError.unmirrorable("\(id): its ZCOLUMNS bitmap cannot be decoded with the model")
                }
                var names = try properties.filter { try !conflicts.loses(change, property: $0, token: token) }
                names += try rederivedToManys(id, decoded: properties)
                plan.update(id, names)
            }
        }
        return try mirror(plan, metadata)
    }

    /// When a legacy update sets any to-many slot: every other to-many of the object, so that its
    /// memberships are re-derived from the join tables and inverse keys — which to-many a slot names is
    /// learnt, not known (coredata-sqlite-format.md §4.3), and a misnamed slot must not lose a change. A
    /// to-many the new side has a change pending to is left to that change (it was not known to change here).
    func rederivedToManys(_ id: ObjectID, decoded: [String]) throws -> [String] {
        guard let entity = model.entity(named: id.entity) else { return [] }
        let toManys = model.allRelationships(of: entity).filter { $0.isToMany && !$0.isTransient }.map(\.name)
        guard decoded.contains(where: toManys.contains) else { return [] }
        let root = engine.identities.root(of: id.entity)
        let identity = try engine.identities.recordedID(root: root, pk: id.pk)
        return try toManys.filter { name in
            guard !decoded.contains(name) else { return false }
            guard let identity else { return true }
            return try !conflicts.hasPendingChange(root: root, id: identity, to: [name], on: .new)
        }
    }

    /// Mirrors `objects` as if just inserted (parked objects tried again): each one the new side does not
    /// hold yet is copied, with its relationships. `repairing`: also one mirrored before and missing from the
    /// new side since.
    func mirror(objects: [ObjectID], _ metadata: SaveMetadata, repairing: Bool = false) throws -> Int64? {
        var plan = MirrorPlan<ObjectID>()
        for id in objects { plan.insert(id) }
        return try mirror(plan, metadata, repairing: repairing)
    }

    private func mirror(
        _ plan: MirrorPlan<ObjectID>,
        _ metadata: SaveMetadata,
        repairing: Bool = false
    ) throws
        -> Int64?
    {
        var plan = plan
        return try engine.new.save(metadata) { save in
            save.enforcesMandatoryValues = false
            save.recordsValues = false
            var context = Context(engine: engine, save: save)
            context.recreates = repairing
            for change in plan.deletes { try delete(change, &context) }
            try context.freeUniqueValues(&plan, conflicts: conflicts)
            let copied =
                setBased
                ? try SetInserts(engine: engine).insert(
                    plan.order.filter { plan.entries[$0]?.inserted == true },
                    save: save
                ) : []
            let updated =
                setBased
                ? try SetUpdates(engine: engine).update(
                    plan.order.compactMap { id in
                        plan.entries[id].flatMap { $0.inserted ? nil : (id, $0.properties) }
                    },
                    save: save
                ) : []
            var relationships: [(ObjectID, ObjectRef, [String])] = []
            for id in plan.order where !copied.contains(id) && !updated.contains(id) {
                guard let entry = plan.entries[id], let entity = model.entity(named: id.entity),
                    let (object, ref) = try context.ensure(id)
                else { continue }
                let attributes = model.allAttributes(of: entity).filter { !$0.isTransient }.map(\.name)
                if entry.inserted {
                    if !context.inserted.contains(id) { try context.syncAttributes(ref, object, attributes) }
                    relationships.append(
                        (id, ref, model.allRelationships(of: entity).filter { !$0.isTransient }.map(\.name))
                    )
                } else {
                    let names = Set(attributes)
                    try context.syncAttributes(ref, object, entry.properties.filter { names.contains($0) })
                    relationships.append((id, ref, entry.properties.filter { !names.contains($0) }))
                }
            }
            for (id, ref, names) in relationships {
                for name in names { try context.syncRelationship(id, ref, name) }
            }
            try engine.derived.copy(context.derivedCandidates, engine: engine) { try save.update($0, $1) }
        }.token
    }

    private func delete(_ change: HistoryChange, _ context: inout Context) throws {
        guard let entity = change.entity, let pk = change.objectPK else {
            throw BridgeError.unmirrorable("delete of an unknown entity number \(change.entityNumber ?? -1)")
        }
        let root = engine.identities.root(of: entity)
        // Gone from the source: not parked any more, whatever else happens.
        try engine.identities.unpark(ObjectID(entity: entity, pk: pk))
        let recorded = try engine.identities.recordedID(root: root, pk: pk)
        guard let identity = recorded ?? tombstoneIdentity(change) else { return }
        // A tombstone's identity is this object's only when no other object is recorded with it: the delete
        // of a parked twin must not delete the object whose id it shared.
        if recorded == nil, let owner = try engine.identities.recordedPK(root: root, id: identity), owner != pk {
            return
        }
        if let stored = try engine.new.entityOfRow(id: identity, rootEntity: root) {
            let ref = ObjectRef(entity: stored, id: identity)
            try context.noteDestinations(of: ref)
            try context.save.delete(ref, applyingRules: false)
        }
        try engine.identities.forget(root: root, pk: pk)
    }

    func objectID(_ change: HistoryChange) throws -> ObjectID? {
        guard let entity = change.entity, let pk = change.objectPK else {
            throw BridgeError.unmirrorable(
                "change \(change.changeID): entity number \(change.entityNumber ?? -1) is not in the model"
            )
        }
        return ObjectID(entity: entity, pk: pk)
    }

    /// For an object deleted before the bridge saw it: its identity attribute, kept in the tombstone.
    func tombstoneIdentity(_ change: HistoryChange) -> String? {
        guard let entity = change.entity, case .uuidAttribute(let name)? = engine.new.schema.entities[entity]?.identity,
            case .uuid(let bytes)? = change.tombstone[name]
        else { return nil }
        return UUIDText.text(bytes)
    }

    /// The objects touched by one mirrored transaction.
    struct Context {
        let engine: SyncEngine
        let save: NewSave
        var ensured: [ObjectID: (LegacyObject, ObjectRef)] = [:]
        /// Objects this mirror inserted on the new side (attributes only, no relationship yet).
        var inserted: Set<ObjectID> = []
        /// Stored attribute names by entity.
        var storedNames: [String: Set<String>] = [:]
        /// Objects whose derived values may have moved (see ``DerivedAttributes``).
        var derivedCandidates: Set<ObjectID> = []
        /// A repair: an object mirrored before and missing from the new side since is created again (the
        /// legacy side is right), where a mirror leaves the new side's delete to win.
        var recreates = false

        /// Notes `id` when its entity has derived attributes.
        mutating func noteDerived(_ id: ObjectID) {
            if engine.derived.concerns(id.entity) { derivedCandidates.insert(id) }
        }

        /// Notes the legacy identity of a new-side object, when it has one and derived attributes.
        mutating func noteDerived(_ ref: ObjectRef) throws {
            guard engine.derived.concerns(ref.entity),
                let pk = try engine.identities.recordedPK(root: engine.identities.root(of: ref.entity), id: ref.id)
            else { return }
            derivedCandidates.insert(ObjectID(entity: ref.entity, pk: pk))
        }

        /// Notes what the to-ones of a new-side object about to be deleted point to.
        mutating func noteDestinations(of ref: ObjectRef) throws {
            for target in try Self.destinations(of: ref, engine: engine) { try noteDerived(target) }
        }

        /// What the to-ones of a new-side object point to, when the model has derived attributes.
        static func destinations(of ref: ObjectRef, engine: SyncEngine) throws -> [ObjectRef] {
            guard !engine.derived.names.isEmpty, let entity = engine.new.model.entity(named: ref.entity) else {
                return []
            }
            return try engine.new.model.allRelationships(of: entity).filter { !$0.isToMany }.flatMap {
                try engine.new.related(ref, $0.name)
            }
        }

        /// The legacy object and its new-schema reference, inserting it on the new side when absent; nil when
        /// the legacy object no longer exists (a later transaction deleted it).
        mutating func ensure(_ id: ObjectID) throws -> (LegacyObject, ObjectRef)? {
            if let known = ensured[id] { return known }
            guard let object = try engine.legacy.object(id) else { return nil }
            let root = engine.identities.root(of: id.entity)
            let mapped = try engine.identities.recordedID(root: root, pk: id.pk) != nil
            let identity: String
            do {
                identity = try engine.identities.identity(for: object)
            } catch BridgeError.sharedIdentity(let reason) {
                // Parked, not merged into the other object's row: the rest of the transaction goes on.
                if try engine.identities.park(id, reason: reason) {
                    var notice = BridgeNotice(.parkedObject, "object parked: \(reason)")
                    notice.side = .legacy
                    notice.entity = id.entity
                    notice.object = "\(id.pk)"
                    (engine.reportParkedObject ?? engine.report)(notice)
                }
                return nil
            }
            let ref = ObjectRef(entity: id.entity, id: identity)
            noteDerived(id)
            if try engine.new.entityOfRow(id: identity, rootEntity: root) == nil {
                // Mirrored before and gone since: the new side deleted it, and that delete wins (it is
                // pending or already mirrored). Never mirrored: copy it now, nothing is lost.
                guard !mapped || recreates else { return nil }
                try save.insert(id.entity, id: identity, storable(object.attributes, entity: id.entity))
                try engine.identities.unpark(id)
                inserted.insert(id)
            }
            ensured[id] = (object, ref)
            return (object, ref)
        }

        /// Values the new side stores (every non-transient attribute).
        mutating func storable(_ values: [String: AttributeValue], entity: String) -> [String: AttributeValue] {
            guard let definition = engine.new.model.entity(named: entity) else { return values }
            let names =
                storedNames[entity]
                ?? Set(engine.new.model.allAttributes(of: definition).filter { !$0.isTransient }.map(\.name))
            storedNames[entity] = names
            return values.filter { names.contains($0.key) }
        }

        /// Frees, on the new side, the unique values the planned objects are about to move, bringing
        /// forward the objects that still hold them there (see ``UniqueValues``).
        mutating func freeUniqueValues(_ plan: inout MirrorPlan<ObjectID>, conflicts: ConflictResolver) throws {
            let engine = engine
            let save = save
            let identities = engine.identities
            func ref(_ id: ObjectID) throws -> ObjectRef? {
                try identities.recordedID(root: identities.root(of: id.entity), pk: id.pk).map {
                    ObjectRef(entity: id.entity, id: $0)
                }
            }
            var destinations: [ObjectRef] = []
            try engine.unique.free(
                &plan,
                UniqueValues.Access(
                    entity: { $0.entity },
                    read: { id in
                        let source = try engine.legacy.object(id)?.attributes
                        return (source, try ref(id).flatMap { try engine.new.values(of: $0) })
                    },
                    update: { id, values in if let target = try ref(id) { try save.update(target, values) } },
                    holders: { owner, values in
                        try engine.new.refs(of: owner, holding: values).compactMap { holder in
                            try identities.recordedPK(root: identities.root(of: holder.entity), id: holder.id).map {
                                ObjectID(entity: holder.entity, pk: $0)
                            }
                        }
                    },
                    pendingOnTarget: { id, properties in
                        guard let target = try ref(id) else { return false }
                        return try conflicts.hasPendingChange(
                            root: identities.root(of: id.entity),
                            id: target.id,
                            to: properties,
                            on: .new
                        )
                    },
                    delete: { id in
                        guard let target = try ref(id) else { return }
                        destinations += try Self.destinations(of: target, engine: engine)
                        try save.delete(target, applyingRules: false)
                        try identities.forget(root: identities.root(of: id.entity), pk: id.pk)
                    }
                )
            )
            for target in destinations { try noteDerived(target) }
        }

        func syncAttributes(_ ref: ObjectRef, _ object: LegacyObject, _ names: [String]) throws {
            guard !names.isEmpty, let current = try engine.new.values(of: ref) else { return }
            var changed: [String: AttributeValue] = [:]
            for name in names where current[name] != (object.attributes[name] ?? .null) {
                changed[name] = object.attributes[name] ?? .null
            }
            if !changed.isEmpty { try save.update(ref, changed) }
        }

        mutating func syncRelationship(_ id: ObjectID, _ ref: ObjectRef, _ name: String) throws {
            let model = engine.new.model
            guard let entity = model.entity(named: id.entity),
                let relationship = model.allRelationships(of: entity).first(where: { $0.name == name })
            else { return }
            if !relationship.isToMany {
                // The state `ensure` read in this same transaction.
                guard let object = try ensured[id]?.0 ?? engine.legacy.object(id) else { return }
                var target: ObjectRef?
                if let targetID = object.toOne[name] { target = try ensure(targetID)?.1 }
                // A row inserted just now has no to-one yet.
                let current = inserted.contains(id) ? nil : try engine.new.related(ref, name).first
                if current != target {
                    if let current { try noteDerived(current) }
                    try save.setToOne(ref, name, target)
                }
                return
            }
            var wanted: [ObjectRef] = []
            for targetID in try engine.legacy.related(id, name) {
                if let target = try ensure(targetID)?.1 { wanted.append(target) }
            }
            let current = try engine.new.related(ref, name)
            if relationship.isOrdered {
                if current != wanted {
                    for removed in current where !wanted.contains(removed) { try noteDerived(removed) }
                    try save.setOrdered(ref, name, wanted)
                }
            } else {
                let wantedSet = Set(wanted)
                let currentSet = Set(current)
                for removed in current where !wantedSet.contains(removed) { try noteDerived(removed) }
                try save.remove(ref, from: name, current.filter { !wantedSet.contains($0) })
                try save.add(ref, to: name, wanted.filter { !currentSet.contains($0) })
            }
        }
    }
}
