import CoexistHistory
import CoexistLegacyStore
import CoexistModel

extension ManagedObjectContext {
    /// Writes every insert, change and delete as one SQLite transaction and one persistent-history
    /// transaction; returns its token (nil when there was nothing to save).
    ///
    /// Before writing, every changed or deleted object's stored version (`Z_OPT`) is compared with the one
    /// the context read; differences are handled by ``mergePolicy``. On any error nothing is written and the
    /// context keeps all its changes.
    @discardableResult
    public func save() throws(CoreDataError) -> Int64? {
        guard hasChanges else { return nil }
        guard !isReadOnly else { throw .readOnly(path: store.path) }
        for object in registered.values { if let problem = object.problems.first { throw problem } }
        for object in insertedOrder { if let problem = object.problems.first { throw problem } }
        let inserted = insertedOrder
        let updated = registered.values.filter(\.isUpdated).sorted { "\($0.objectID)" < "\($1.objectID)" }
        let deleted = deletedObjects
        var permanent: [ObjectIdentifier: ObjectID] = [:]
        var dropped: Set<ObjectIdentifier> = []
        let result: SaveResult
        do {
            result = try store.save(
                SaveMetadata(author: transactionAuthor, contextName: name, processName: processName)
            ) { save in
                dropped = try resolveConflicts(updated + deleted)
                for object in inserted {
                    var values: [String: AttributeValue] = [:]
                    for (key, change) in object.pending {
                        if case .attribute(let value) = change { values[key] = value }
                    }
                    permanent[ObjectIdentifier(object)] = try save.insert(object.entity, values)
                }
                for object in updated where !dropped.contains(ObjectIdentifier(object)) {
                    guard let pk = object.objectID.pk else { continue }
                    var values: [String: AttributeValue] = [:]
                    for (key, change) in object.pending {
                        if case .attribute(let value) = change { values[key] = value }
                    }
                    let id = ObjectID(entity: object.entity, pk: pk)
                    // An object changed only in its relationships still gets its version bumped.
                    try save.update(id, values)
                    permanent[ObjectIdentifier(object)] = id
                }
                for object in inserted + updated where !dropped.contains(ObjectIdentifier(object)) {
                    try writeRelationships(object, save, permanent)
                }
                for object in deleted where !dropped.contains(ObjectIdentifier(object)) {
                    guard let pk = object.objectID.pk else { continue }
                    try save.delete(ObjectID(entity: object.entity, pk: pk))
                }
            }
        } catch let error as CoreDataError {
            throw error
        } catch let error as LegacyStoreError {
            if case .validation(_, let detail) = error { throw .validation(object: "", key: "", reason: detail) }
            throw .store(error.description)
        } catch {
            throw .store("\(error)")
        }
        if let token = result.token { ownTokens.insert(token) }
        afterSave(inserted: inserted, deleted: deleted, dropped: dropped, permanent: permanent, changes: result.changes)
        return result.token
    }

    private var processName: String {
        CommandLine.arguments.first.map { String($0.split(separator: "/").last ?? "") } ?? ""
    }

    /// Checks every object's stored version against the one read; applies the merge policy to those that
    /// moved. Returns the objects whose changes are dropped (the store's state wins for them).
    private func resolveConflicts(_ objects: [ManagedObject]) throws -> Set<ObjectIdentifier> {
        var conflicts: [(ManagedObject, LegacyObject?)] = []
        for object in objects {
            guard let pk = object.objectID.pk, let snapshot = object.snapshot else { continue }
            let stored = try store.object(ObjectID(entity: object.entity, pk: pk))
            if stored?.version != snapshot.version { conflicts.append((object, stored)) }
        }
        guard !conflicts.isEmpty else { return [] }
        switch mergePolicy {
        case .error:
            throw CoreDataError.mergeConflict(
                conflicts.map { object, stored in
                    MergeConflict(
                        objectID: object.objectID,
                        cachedVersion: object.snapshot?.version ?? 0,
                        persistedVersion: stored?.version
                    )
                }
            )
        case .objectWins:
            // The context's properties overwrite; an object deleted elsewhere cannot take changes.
            return Set(conflicts.filter { $0.1 == nil }.map { ObjectIdentifier($0.0) })
        case .storeWins:
            var dropped: Set<ObjectIdentifier> = []
            for (object, stored) in conflicts {
                guard let stored, !object.isDeleted, let snapshot = object.snapshot else {
                    dropped.insert(ObjectIdentifier(object))
                    continue
                }
                for key in Array(object.pending.keys) {
                    let changedElsewhere: Bool
                    if attribute(object.entity, key) != nil {
                        changedElsewhere = stored.attributes[key] != snapshot.attributes[key]
                    } else if relationship(object.entity, key)?.isToMany == false {
                        changedElsewhere = stored.toOne[key].map(identity) != snapshot.toOne[key]
                    } else {
                        let now = try store.related(stored.id, key).map(identity)
                        changedElsewhere = snapshot.toMany[key].map { $0 != now } ?? true
                    }
                    if changedElsewhere { object.pending[key] = nil }
                }
            }
            return dropped
        }
    }

    private func writeRelationships(
        _ object: ManagedObject,
        _ save: LegacySave,
        _ permanent: [ObjectIdentifier: ObjectID]
    ) throws {
        guard let id = permanent[ObjectIdentifier(object)] else { return }
        let target = { (other: ManagedObject) throws -> ObjectID in
            if let known = permanent[ObjectIdentifier(other)] { return known }
            guard let pk = other.objectID.pk else {
                throw CoreDataError.validation(
                    object: "\(object.objectID)",
                    key: "",
                    reason: "\(other.objectID) is not inserted in the context"
                )
            }
            return ObjectID(entity: other.entity, pk: pk)
        }
        for (key, change) in object.pending.sorted(by: { $0.key < $1.key }) {
            switch change {
            case .attribute: continue
            case .toOne(let other):
                try save.setToOne(id, key, try other.map(target))
            case .toMany(let members):
                let wanted = try members.filter { !$0.isDeleted }.map(target)
                if relationship(object.entity, key)?.isOrdered == true {
                    try save.setOrdered(id, key, wanted)
                } else {
                    let stored = object.isInserted ? [] : try store.related(id, key)
                    try save.remove(id, from: key, stored.filter { !wanted.contains($0) })
                    try save.add(id, to: key, wanted.filter { !stored.contains($0) })
                }
            }
        }
    }

    /// After a commit: inserted objects take their permanent identities, deleted ones (the rules' too)
    /// leave the context, and every object the save wrote reads its new state on next use.
    private func afterSave(
        inserted: [ManagedObject],
        deleted: [ManagedObject],
        dropped: Set<ObjectIdentifier>,
        permanent: [ObjectIdentifier: ObjectID],
        changes: [HistoryChange]
    ) {
        for object in inserted {
            guard let id = permanent[ObjectIdentifier(object)] else { continue }
            registered[object.objectID] = nil
            object.objectID = identity(id)
            object.isInserted = false
            registered[object.objectID] = object
        }
        insertedOrder = []
        deletedObjects = []
        for object in deleted {
            if dropped.contains(ObjectIdentifier(object)) && mergePolicy == .storeWins {
                // The delete was cancelled: another writer changed the object.
                object.isDeleted = false
                object.snapshot = nil
            } else {
                forget(object)
            }
        }
        // Objects another writer deleted, whose changes could not be saved, are gone.
        for object in registered.values where dropped.contains(ObjectIdentifier(object)) && !object.isDeleted {
            if let pk = object.objectID.pk, (try? store.object(ObjectID(entity: object.entity, pk: pk))) == nil {
                object.isDeleted = true
                forget(object)
            } else {
                object.snapshot = nil
            }
        }
        for change in changes {
            guard let entity = change.entity, let pk = change.objectPK else { continue }
            let id = ManagedObjectID(entityName: entity, pk: pk, storeIdentifier: storeIdentifier)
            guard let object = registered[id] else { continue }
            if change.type == .delete {
                object.isDeleted = true
                forget(object)
            } else {
                object.snapshot = nil
            }
        }
        for object in registered.values {
            // Everything the save touched reads its stored state (and version) again on next use, also
            // an object whose changes the store-wins policy dropped entirely (its save wrote nothing).
            if !object.pending.isEmpty { object.snapshot = nil }
            object.pending = [:]
            object.problems = []
        }
    }
}
