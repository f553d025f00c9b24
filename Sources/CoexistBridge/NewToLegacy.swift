import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistStore

/// Mirrors a snapshot of new-schema transactions (one or more, in token order) into Core Data's tables in
/// one legacy save, making every object they touched equal to its current new-side state; written through
/// the legacy store, so `Z_PK`, `Z_OPT`, relationships and Core Data history are as Core Data would write
/// them. The order is ``LegacyToNew``'s: deletes, freed unique values, inserts, attributes, relationships.
struct NewToLegacy {
    let engine: SyncEngine
    let conflicts: ConflictResolver

    var model: Model { engine.new.model }

    func mirror(_ transactions: [HistoryTransaction], _ metadata: SaveMetadata) throws -> Int64? {
        var plan = MirrorPlan<ObjectRef>()
        for (token, change) in MirrorPlan<ObjectRef>.changes(of: transactions) {
            switch change.type {
            case .delete: plan.deletes.append(change)
            case .insert: if let ref = try reference(change) { plan.insert(ref) }
            case .update:
                guard let ref = try reference(change) else { continue }
                plan.update(
                    ref,
                    try (change.properties ?? []).filter { try !conflicts.loses(change, property: $0, token: token) }
                )
            }
        }
        return try mirror(plan, metadata)
    }

    /// Makes each of `refs` in the legacy tables equal to its current new-side state, as if just inserted
    /// (a repair): one the legacy side does not hold yet is created, with its relationships.
    func mirror(refs: [ObjectRef], _ metadata: SaveMetadata) throws -> Int64? {
        var plan = MirrorPlan<ObjectRef>()
        for ref in refs { plan.insert(ref) }
        return try mirror(plan, metadata, repairing: true)
    }

    private func mirror(
        _ plan: MirrorPlan<ObjectRef>,
        _ metadata: SaveMetadata,
        repairing: Bool = false
    ) throws
        -> Int64?
    {
        var plan = plan
        var derivedCandidates: Set<ObjectID> = []
        let token = try engine.legacy.save(metadata) { save in
            save.enforcesMandatoryValues = false
            var context = Context(engine: engine, save: save)
            context.recreates = repairing
            for change in plan.deletes { try delete(change, &context) }
            try context.freeUniqueValues(&plan, conflicts: conflicts)
            var relationships: [(ObjectRef, ObjectID, [String])] = []
            for ref in plan.order {
                guard let entry = plan.entries[ref], let entity = model.entity(named: ref.entity),
                    let (values, id) = try context.ensure(ref)
                else { continue }
                let attributes = model.allAttributes(of: entity).map(\.name)
                if entry.inserted {
                    try context.syncAttributes(id, values, attributes)
                    relationships.append(
                        (ref, id, model.allRelationships(of: entity).filter { !$0.isTransient }.map(\.name))
                    )
                } else {
                    let names = Set(attributes)
                    try context.syncAttributes(id, values, entry.properties.filter { names.contains($0) })
                    relationships.append((ref, id, entry.properties.filter { !names.contains($0) }))
                }
            }
            for (ref, id, names) in relationships {
                for name in names { try context.syncRelationship(ref, id, name) }
            }
            derivedCandidates = context.derivedCandidates
        }.token
        // Core Data's triggers have just set the legacy side's derived values: the new side gets them, in
        // a save of the bridge's own (nothing when none moved).
        if !derivedCandidates.isEmpty {
            try engine.new.save(metadata) { save in
                save.recordsValues = false
                try engine.derived.copy(derivedCandidates, engine: engine) { try save.update($0, $1) }
            }
        }
        return token
    }

    private func delete(_ change: HistoryChange, _ context: inout Context) throws {
        guard let ref = try reference(change) else { return }
        let root = engine.identities.root(of: ref.entity)
        guard let pk = try engine.identities.recordedPK(root: root, id: ref.id) else { return }
        if let object = try engine.legacy.object(ObjectID(entity: ref.entity, pk: pk)) {
            try context.noteDestinations(of: object.id)
            try context.save.delete(object.id, applyingRules: false)
        }
        try engine.identities.forget(root: root, pk: pk)
    }

    func reference(_ change: HistoryChange) throws -> ObjectRef? {
        guard let entity = change.entity, model.entity(named: entity) != nil, let id = change.objectID else {
            throw BridgeError.unmirrorable(
                "change \(change.changeID): entity \(change.entity ?? "?") is not in the model"
            )
        }
        return ObjectRef(entity: entity, id: id)
    }

    struct Context {
        let engine: SyncEngine
        let save: LegacySave
        var ensured: [ObjectRef: ([String: AttributeValue], ObjectID)] = [:]
        /// Legacy objects whose derived values may have moved (see ``DerivedAttributes``).
        var derivedCandidates: Set<ObjectID> = []
        /// A repair: an object mirrored before and missing from the legacy side since is created again (the
        /// new side is right), where a mirror leaves the legacy side's delete to win.
        var recreates = false

        mutating func noteDerived(_ id: ObjectID) {
            if engine.derived.concerns(id.entity) { derivedCandidates.insert(id) }
        }

        /// Notes what the to-ones of a legacy object about to be deleted point to.
        mutating func noteDestinations(of id: ObjectID) throws {
            for target in try Self.destinations(of: id, engine: engine) { noteDerived(target) }
        }

        /// What the to-ones of a legacy object point to, when the model has derived attributes.
        static func destinations(of id: ObjectID, engine: SyncEngine) throws -> [ObjectID] {
            guard !engine.derived.names.isEmpty, let model = engine.legacy.model,
                let entity = model.entity(named: id.entity)
            else { return [] }
            return try model.allRelationships(of: entity).filter { !$0.isToMany }.flatMap {
                try engine.legacy.related(id, $0.name)
            }
        }

        /// The new-side values and the legacy identity of `ref`, inserting it on the legacy side when absent;
        /// nil when the new-side object no longer exists.
        mutating func ensure(_ ref: ObjectRef) throws -> ([String: AttributeValue], ObjectID)? {
            if let known = ensured[ref] { return known }
            guard let values = try engine.new.values(of: ref) else { return nil }
            let root = engine.identities.root(of: ref.entity)
            var id: ObjectID?
            var recorded = try engine.identities.recordedPK(root: root, id: ref.id)
            if let pk = recorded, recreates, try engine.legacy.object(ObjectID(entity: ref.entity, pk: pk)) == nil {
                try engine.identities.forget(root: root, pk: pk)
                recorded = nil
            }
            if let pk = recorded {
                // Mirrored before: when the legacy side deleted it since, that delete wins.
                let candidate = ObjectID(entity: ref.entity, pk: pk)
                guard try engine.legacy.object(candidate) != nil else { return nil }
                id = candidate
            } else {
                let inserted = try save.insert(ref.entity, storable(values, entity: ref.entity))
                try engine.identities.record(root: root, pk: inserted.pk, id: ref.id)
                id = inserted
            }
            guard let id else { return nil }
            noteDerived(id)
            ensured[ref] = (values, id)
            return (values, id)
        }

        /// Values Core Data stores: no derived or trigger-maintained attribute (its triggers maintain those).
        func storable(_ values: [String: AttributeValue], entity: String) -> [String: AttributeValue] {
            guard let definition = engine.legacy.model?.entity(named: entity), let model = engine.legacy.model else {
                return values
            }
            let maintained = Set(engine.derived.names[entity] ?? [])
            let names = Set(
                model.allAttributes(of: definition).filter { !$0.isTransient && !$0.isDerived }.map(\.name)
            ).subtracting(maintained)
            return values.filter { names.contains($0.key) }
        }

        /// Frees, on the legacy side, the unique values the planned objects are about to move, bringing
        /// forward the objects that still hold them there (see ``UniqueValues``).
        mutating func freeUniqueValues(_ plan: inout MirrorPlan<ObjectRef>, conflicts: ConflictResolver) throws {
            let engine = engine
            let save = save
            let identities = engine.identities
            func id(_ ref: ObjectRef) throws -> ObjectID? {
                try identities.recordedPK(root: identities.root(of: ref.entity), id: ref.id).map {
                    ObjectID(entity: ref.entity, pk: $0)
                }
            }
            var destinations: [ObjectID] = []
            try engine.unique.free(
                &plan,
                UniqueValues.Access(
                    entity: { $0.entity },
                    read: { ref in
                        (
                            try engine.new.values(of: ref),
                            try id(ref).flatMap { try engine.legacy.object($0)?.attributes }
                        )
                    },
                    update: { ref, values in if let target = try id(ref) { try save.update(target, values) } },
                    holders: { owner, values in
                        try engine.legacy.objects(of: owner, holding: values).compactMap { holder in
                            try identities.recordedID(root: identities.root(of: holder.entity), pk: holder.pk).map {
                                ObjectRef(entity: holder.entity, id: $0)
                            }
                        }
                    },
                    pendingOnTarget: { ref, properties in
                        try conflicts.hasPendingChange(
                            root: identities.root(of: ref.entity),
                            id: ref.id,
                            to: properties,
                            on: .legacy
                        )
                    },
                    delete: { ref in
                        guard let target = try id(ref) else { return }
                        destinations += try Self.destinations(of: target, engine: engine)
                        try save.delete(target, applyingRules: false)
                        try identities.forget(root: identities.root(of: ref.entity), pk: target.pk)
                    }
                )
            )
            for target in destinations { noteDerived(target) }
        }

        func syncAttributes(_ id: ObjectID, _ values: [String: AttributeValue], _ names: [String]) throws {
            guard let object = try engine.legacy.object(id) else { return }
            var changed: [String: AttributeValue] = [:]
            for (name, value) in storable(values, entity: id.entity)
            where names.contains(name) && object.attributes[name] != value {
                changed[name] = value
            }
            if !changed.isEmpty { try save.update(id, changed) }
        }

        mutating func syncRelationship(_ ref: ObjectRef, _ id: ObjectID, _ name: String) throws {
            let model = engine.new.model
            guard let entity = model.entity(named: ref.entity),
                let relationship = model.allRelationships(of: entity).first(where: { $0.name == name })
            else { return }
            var wanted: [ObjectID] = []
            for target in try engine.new.related(ref, name) {
                if let (_, targetID) = try ensure(target) { wanted.append(targetID) }
            }
            let current = try engine.legacy.related(id, name)
            let wantedSet = Set(wanted)
            for removed in current where !wantedSet.contains(removed) { noteDerived(removed) }
            if !relationship.isToMany {
                if current.first != wanted.first { try save.setToOne(id, name, wanted.first) }
            } else if relationship.isOrdered {
                if current != wanted { try save.setOrdered(id, name, wanted) }
            } else {
                let currentSet = Set(current)
                try save.remove(id, from: name, current.filter { !wantedSet.contains($0) })
                try save.add(id, to: name, wanted.filter { !currentSet.contains($0) })
            }
        }
    }
}
