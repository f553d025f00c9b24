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
            for registration in live where registration.deleted {
                try save.delete(registration.ref)
            }
            let deleted = Set(live.filter(\.deleted).map(\.ref))
            let inserted = live.filter { $0.snapshot == nil && !$0.deleted }
            for registration in inserted {
                try save.insert(
                    registration.ref.entity,
                    id: registration.ref.id,
                    currentSnapshot(registration).attributes
                )
            }
            for registration in live where !registration.deleted {
                let now = currentSnapshot(registration)
                let before = registration.snapshot ?? Snapshot(attributes: [:], relationships: [:])
                if registration.snapshot != nil {
                    let changed = now.attributes.filter { before.attributes[$0.key] != $0.value }
                    if !changed.isEmpty { try save.update(registration.ref, changed) }
                }
                try writeRelationships(registration, now, before, deleted, save, kind: .toOne)
            }
            for registration in live where !registration.deleted {
                let before = registration.snapshot ?? Snapshot(attributes: [:], relationships: [:])
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
        for (name, current) in now.relationships.sorted(by: { $0.key < $1.key })
        where registration.schema.kinds[name] == kind {
            let previous = before.relationships[name] ?? []
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

    /// Inserts records reachable through relationships from registered records (SwiftData does the same).
    private func registerReachableRecords() {
        var queue = insertionOrder.compactMap { registrations[$0] }.filter { !$0.deleted }
        while let registration = queue.popLast() {
            for read in registration.schema.readObjects.values {
                for object in read(registration.object) where registrations[ObjectIdentifier(object)] == nil {
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
        for registration in insertionOrder.compactMap({ registrations[$0] }) { try reload(registration) }
    }

    func rootEntity(of entity: String) -> String {
        store.model.entity(named: entity).map { store.model.root(of: $0).name } ?? entity
    }

    /// Loads relationships from the database into the record (those in `toOnes`, read already with the
    /// record's row, without a query), and snapshots it.
    func reload(_ registration: Registration, toOnes: [String: [ObjectRef]] = [:]) throws {
        var relationships: [String: [ObjectRef]] = [:]
        for (name, write) in registration.schema.writeObjects {
            let destination = registration.schema.destinations[name]
            if let known = toOnes[name] {
                // Read from the row's key without a join: only a target that exists counts.
                let found = try known.compactMap { ref in try materialize(ref, as: destination).map { (ref, $0) } }
                relationships[name] = found.map(\.0)
                write(registration.object, found.map(\.1))
                continue
            }
            let refs = try store.related(registration.ref, name)
            relationships[name] = refs
            write(registration.object, try refs.compactMap { try materialize($0, as: destination) })
        }
        var attributes: [String: AttributeValue] = [:]
        for (name, read) in registration.schema.readAttribute { attributes[name] = read(registration.object) }
        registration.snapshot = Snapshot(attributes: attributes, relationships: relationships)
    }
}
