import CoexistHistory
import CoexistLegacyStore
import CoexistModel

extension ManagedObjectContext {
    /// Writes every insert, change and delete as one SQLite transaction and one persistent-history
    /// transaction; returns its token (nil when there was nothing to save).
    ///
    /// Before writing, every changed or deleted object's stored version (`Z_OPT`) is compared with the one
    /// the context read; differences are handled by ``mergePolicy``. On any error nothing is written and the
    /// context keeps all its changes (inserted objects a deleted object's cascade reaches are deleted first,
    /// as Core Data's processing of pending changes does, and stay so).
    @discardableResult
    public func save() throws(CoreDataError) -> Int64? {
        // A value refused when it was set fails the save even when nothing else is to save.
        for object in registered.values { if let problem = object.problems.first { throw problem } }
        guard hasChanges else { return nil }
        guard !isReadOnly else { throw .readOnly(path: store.path) }
        deleteInsertsOfCascades()
        for object in insertedOrder {
            if let problem = object.problems.first { throw problem }
            try checkMandatoryValues(object)
        }
        let inserted = insertedOrder
        let updated = registered.values.filter(\.isUpdated).sorted { "\($0.objectID)" < "\($1.objectID)" }
        for object in updated { try checkMandatoryValues(object) }
        let deleted = deletedObjects
        var permanent: [ObjectIdentifier: ObjectID] = [:]
        // Inserted objects a delete's cascade took in this same save (their owner deleted): deleted.
        var cascaded: [ManagedObject] = []
        var outcome = ConflictOutcome()
        // The object being written when the store refuses something: its error names it.
        var writing: ManagedObject?
        let result: SaveResult
        do {
            result = try store.save(
                SaveMetadata(author: transactionAuthor, contextName: name, processName: processName)
            ) { save in
                outcome = try resolveConflicts(updated + deleted)
                for object in inserted {
                    writing = object
                    permanent[ObjectIdentifier(object)] = try save.insert(object.entity, attributeChanges(object))
                }
                for object in updated where !outcome.dropped.contains(ObjectIdentifier(object)) {
                    guard let pk = object.objectID.pk else { continue }
                    writing = object
                    let id = ObjectID(entity: object.entity, pk: pk)
                    // An object changed only in its relationships still gets its version bumped.
                    try save.update(id, attributeChanges(object, skipping: outcome.skipped(object)))
                    permanent[ObjectIdentifier(object)] = id
                }
                for object in inserted + updated where !outcome.dropped.contains(ObjectIdentifier(object)) {
                    writing = object
                    try writeRelationships(object, save, permanent, skipping: outcome.skipped(object))
                }
                // Every object the context deletes: a Deny rule does not count one of them, whatever the order.
                let deleting = Set(
                    deleted.lazy.filter { !outcome.dropped.contains(ObjectIdentifier($0)) }
                        .compactMap { object in object.objectID.pk.map { ObjectID(entity: object.entity, pk: $0) } }
                )
                for object in deleted where !outcome.dropped.contains(ObjectIdentifier(object)) {
                    guard let pk = object.objectID.pk else { continue }
                    // One a cascade deleted earlier in this save (its owner came first) is deleted already.
                    let id = ObjectID(entity: object.entity, pk: pk)
                    guard !save.hasDeleted(id) else { continue }
                    writing = object
                    try save.delete(id, alongside: deleting)
                }
                cascaded = inserted.filter { permanent[ObjectIdentifier($0)].map(save.hasDeleted) == true }
            }
        } catch let error as CoreDataError {
            throw error
        } catch let error as LegacyStoreError {
            if case .validation(_, let detail) = error {
                throw .validation(object: writing.map { "\($0.objectID)" } ?? "", key: "", reason: detail)
            }
            throw .store(error.description)
        } catch {
            throw .store("\(error)")
        }
        if let token = result.token { ownTokens.insert(token) }
        afterSave(
            inserted: inserted,
            deleted: deleted + cascaded,
            dropped: outcome.dropped,
            permanent: permanent,
            changes: result.changes
        )
        return result.token
    }

    /// What the merge policy decided inside the save's transaction. The objects' pending changes are never
    /// touched there: a save that fails after it keeps every change for the next try.
    struct ConflictOutcome {
        /// Objects whose changes are not written at all (the store's state wins for them).
        var dropped: Set<ObjectIdentifier> = []
        /// Properties whose changes another writer's change overrides (store-wins).
        var overridden: [ObjectIdentifier: Set<String>] = [:]

        func skipped(_ object: ManagedObject) -> Set<String> { overridden[ObjectIdentifier(object)] ?? [] }
    }

    /// The attribute values an object's save writes: its pending ones less `skipped`.
    private func attributeChanges(
        _ object: ManagedObject,
        skipping skipped: Set<String> = []
    ) -> [String: AttributeValue] {
        var values: [String: AttributeValue] = [:]
        for (key, change) in object.pending where !skipped.contains(key) {
            if case .attribute(let value) = change { values[key] = value }
        }
        return values
    }

    /// Refuses, naming object and key, a mandatory attribute an insert leaves without a value (and
    /// without a default) or a change sets to nil, as Core Data's validation does before saving.
    private func checkMandatoryValues(_ object: ManagedObject) throws(CoreDataError) {
        guard let entity = model.entity(named: object.entity) else { return }
        for attribute in model.allAttributes(of: entity) where !attribute.isOptional && !attribute.isTransient {
            let value: AttributeValue?
            switch object.pending[attribute.name] {
            case .attribute(let pending)?: value = pending
            default: value = object.isInserted ? attribute.defaultValue?.value : nil
            }
            let missing = object.isInserted ? (value ?? .null) == .null : value == AttributeValue.null
            if missing && !attribute.isDerived {
                throw .validation(
                    object: "\(object.objectID)",
                    key: attribute.name,
                    reason: "the mandatory attribute has no value"
                )
            }
        }
    }

    var processName: String {
        CommandLine.arguments.first.map { String($0.split(separator: "/").last ?? "") } ?? ""
    }

    /// Checks every object's stored version against the one read; applies the merge policy to those that
    /// moved. An object read no version of (a fault deleted before it was ever loaded) is a conflict only
    /// when the store no longer holds it.
    private func resolveConflicts(_ objects: [ManagedObject]) throws -> ConflictOutcome {
        var conflicts: [(ManagedObject, LegacyObject?)] = []
        for object in objects {
            guard let pk = object.objectID.pk else { continue }
            let stored = try store.object(ObjectID(entity: object.entity, pk: pk))
            if let snapshot = object.snapshot {
                if stored?.version != snapshot.version { conflicts.append((object, stored)) }
            } else if stored == nil {
                conflicts.append((object, nil))
            }
        }
        var outcome = ConflictOutcome()
        guard !conflicts.isEmpty else { return outcome }
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
            outcome.dropped = Set(conflicts.filter { $0.1 == nil }.map { ObjectIdentifier($0.0) })
        case .storeWins:
            for (object, stored) in conflicts {
                guard let stored, !object.isDeleted, let snapshot = object.snapshot else {
                    outcome.dropped.insert(ObjectIdentifier(object))
                    continue
                }
                var overridden: Set<String> = []
                for key in object.pending.keys where try changedElsewhere(key, of: object, snapshot, stored) {
                    overridden.insert(key)
                }
                if overridden.count == object.pending.count {
                    outcome.dropped.insert(ObjectIdentifier(object))
                } else if !overridden.isEmpty {
                    outcome.overridden[ObjectIdentifier(object)] = overridden
                }
            }
        }
        return outcome
    }

    /// Whether another writer changed `key` of `object` since the context read it: attributes and to-ones
    /// from the snapshot, a to-many from the members recorded when the context first read or set it (a
    /// to-many with no record counts as changed: the store wins where nothing says otherwise).
    private func changedElsewhere(
        _ key: String,
        of object: ManagedObject,
        _ snapshot: ManagedObject.Snapshot,
        _ stored: LegacyObject
    ) throws -> Bool {
        if attribute(object.entity, key) != nil { return stored.attributes[key] != snapshot.attribute(key) }
        guard let relationship = relationship(object.entity, key) else { return true }
        if !relationship.isToMany { return stored.toOne[key].map(identity) != snapshot.toOne[key] }
        guard let before = snapshot.toMany[key] else { return true }
        let now = try store.related(stored.id, key).map(identity)
        return relationship.isOrdered ? now != before : Set(now) != Set(before)
    }

    private func writeRelationships(
        _ object: ManagedObject,
        _ save: LegacySave,
        _ permanent: [ObjectIdentifier: ObjectID],
        skipping skipped: Set<String>
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
        for (key, change) in object.pending.sorted(by: { $0.key < $1.key }) where !skipped.contains(key) {
            switch change {
            case .attribute: continue
            case .toOne(let other):
                // An object deleted in the context is held by nothing: the link is cleared.
                try save.setToOne(id, key, try other.flatMap { $0.isDeleted ? nil : $0 }.map(target))
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

    /// Deletes the inserted objects a cascade rule of a deleted object reaches (and theirs in turn), as Core
    /// Data's processing of pending changes does: the store's cascade never sees them (the delete clears an
    /// inserted object's link to a deleted owner), so they were saved as orphans. An inserted object is only
    /// ever in a relationship's pending state (inverse upkeep puts it there): nothing is read from the store.
    private func deleteInsertsOfCascades() {
        var queue = deletedObjects
        while let object = queue.popLast() {
            guard let entity = model.entity(named: object.entity) else { continue }
            for relationship in model.allRelationships(of: entity)
            where relationship.deleteRule == .cascade && !relationship.isTransient {
                let members: [ManagedObject]
                switch object.pending[relationship.name] {
                case .toMany(let list)?: members = list
                case .toOne(let target)?: members = target.map { [$0] } ?? []
                default: members = []
                }
                for member in members where member.isInserted && !member.isDeleted {
                    delete(member)
                    queue.append(member)
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
                // Deleted in the context, or (an insert of this save) by a cascade of the store's.
                object.isDeleted = true
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
