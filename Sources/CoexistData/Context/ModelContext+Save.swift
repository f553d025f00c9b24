import CoexistHistory
import CoexistModel
import CoexistStore

extension ModelContext {
    /// Writes every insert, delete and change as one SQLite transaction, recorded in the shared history
    /// with this context's author. Returns the history token, nil when there was nothing to save.
    ///
    /// On error nothing is written and the context keeps its pending changes.
    @discardableResult
    public func save() throws -> Int64? {
        registerReachableRecords()
        let adoptions = try adoptStoredRecords()
        let live = insertionOrder.compactMap { registrations[$0] }
        let result: NewSaveResult
        do {
            result = try write(live)
        } catch {
            undo(adoptions)
            throw error
        }
        if let token = result.token { ownTokens.insert(token) }
        // Committed: the save has happened and must not throw (a caller would retry it, or a transaction
        // roll back what the file now holds). When reading the new state fails, every record takes what it
        // wrote as its saved state; relationships are read again by the next merge or fetch.
        do {
            try refreshAfterSave()
        } catch {
            settle(live)
        }
        return result.token
    }

    /// Writes the registrations' differences from their snapshots as one save.
    private func write(_ live: [Registration]) throws -> NewSaveResult {
        try store.save(metadata) { save in
            // A record a cascade deleted earlier in this save (its owner came first) is deleted already; a Deny
            // rule does not count those the context deletes, whatever the order.
            let deleting = Set(live.lazy.filter(\.deleted).map(\.ref))
            for registration in live where registration.deleted && !save.hasDeleted(registration.ref) {
                try save.delete(registration.ref, alongside: deleting)
            }
            let inserted = live.filter { $0.snapshot == nil && !$0.deleted }
            let insertedRefs = Set(inserted.lazy.map(\.ref))
            // Every stored record this save deleted, those of a cascade included (not one a new record takes
            // the identity of): none is updated (an edit of one a cascade deleted is moot, as in SwiftData),
            // and no relationship is set to one.
            let deleted = Set(live.lazy.map(\.ref).filter { save.hasDeleted($0) && !insertedRefs.contains($0) })
            let live = live.filter { !$0.deleted && ($0.snapshot == nil || !save.hasDeleted($0.ref)) }
            for registration in inserted {
                try save.insert(
                    registration.ref.entity,
                    id: registration.ref.id,
                    registration.schema.named(currentSnapshot(registration).attributes)
                )
            }
            for registration in live {
                let now = currentSnapshot(registration)
                let before = registration.snapshot ?? Snapshot.empty(registration.schema)
                if registration.snapshot != nil {
                    var changed: [String: AttributeValue] = [:]
                    for (slot, value) in now.attributes.enumerated() where before.attributes[slot] != value {
                        changed[registration.schema.attributes[slot].name] = value
                    }
                    if !changed.isEmpty { try save.update(registration.ref, changed) }
                }
                try writeRelationships(registration, now, before, deleted, save, kind: .toOne)
            }
            for registration in live {
                let before = registration.snapshot ?? Snapshot.empty(registration.schema)
                try writeRelationships(
                    registration,
                    currentSnapshot(registration),
                    before,
                    deleted,
                    save,
                    kind: .toMany
                )
            }
        }
    }

    /// After a commit whose refresh failed: deleted records leave the context, the others' current state is
    /// their saved state.
    private func settle(_ written: [Registration]) {
        for registration in written {
            if registration.deleted {
                unregister(registration)
            } else if registrations[ObjectIdentifier(registration.object)] != nil {
                registration.snapshot = currentSnapshot(registration)
            }
        }
    }

    private func writeRelationships(
        _ registration: Registration,
        _ now: Snapshot,
        _ before: Snapshot,
        _ deleted: Set<ObjectRef>,
        _ save: NewSave,
        kind: PropertyKind
    ) throws {
        let slots = registration.schema.relationships.indices.sorted {
            registration.schema.relationships[$0].name < registration.schema.relationships[$1].name
        }
        for slot in slots where registration.schema.relationships[slot].kind == kind {
            let name = registration.schema.relationships[slot].name
            let current = now.relationships[slot]
            let previous = before.relationships[slot]
            let wanted = current.filter { !deleted.contains($0) }
            guard wanted != previous.filter({ !deleted.contains($0) }) else { continue }
            switch kind {
            case .toOne:
                try save.setToOne(registration.ref, name, wanted.first)
            case .toMany:
                let ordered =
                    store.model.entity(named: registration.ref.entity).flatMap { entity in
                        store.model.allRelationships(of: entity).first { $0.name == name }?.isOrdered
                    } ?? false
                if ordered {
                    try save.setOrdered(registration.ref, name, wanted)
                } else {
                    let stored = try store.related(registration.ref, name)
                    let removed = previous.filter {
                        !wanted.contains($0) && !deleted.contains($0) && stored.contains($0)
                    }
                    try save.remove(registration.ref, from: name, removed)
                    try save.add(registration.ref, to: name, wanted.filter { !stored.contains($0) })
                }
            case .attribute:
                continue
            }
        }
    }

    /// Inserts records reachable through relationships from registered records (SwiftData does the same):
    /// before a save, and before changes are looked for (a new record only a relationship holds is one).
    func registerReachableRecords() {
        var queue = insertionOrder.compactMap { registrations[$0] }.filter { !$0.deleted }
        while let registration = queue.popLast() {
            for slot in registration.schema.relationships {
                for object in slot.read(registration.object) where registrations[ObjectIdentifier(object)] == nil {
                    if let added = register(new: object) { queue.append(added) }
                }
            }
        }
    }

    /// After a save: forget deleted records (including cascaded ones), reload relationships from the
    /// database into every record, and take new snapshots.
    func refreshAfterSave() throws {
        for registration in Array(registrations.values) {
            let exists =
                try store.entityOfRow(id: registration.ref.id, rootEntity: rootEntity(of: registration.ref.entity))
                != nil
            if registration.deleted || !exists { unregister(registration) }
        }
        try reload(insertionOrder.compactMap { registrations[$0] })
    }

    func rootEntity(of entity: String) -> String {
        store.model.entity(named: entity).map { store.model.root(of: $0).name } ?? entity
    }
}

extension ModelContext.Snapshot {
    /// The state of a record never saved: no attribute values, no related records.
    static func empty(_ schema: ErasedSchema) -> Self {
        Self(
            attributes: Array(repeating: .null, count: schema.attributes.count),
            relationships: Array(repeating: [], count: schema.relationships.count)
        )
    }
}
