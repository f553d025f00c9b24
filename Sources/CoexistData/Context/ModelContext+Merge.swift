import CoexistHistory
import CoexistModel
import CoexistSQLite
public import CoexistStore

/// A persistent identity apps can store and resolve later (SwiftData's `PersistentIdentifier`): the
/// record's concrete entity and its `id` in the new schema. It is the new store's own reference type, so
/// an identifier and the store's reference to a row are one value; it is `Codable` (`{"entity", "id"}`).
public typealias PersistentIdentifier = ObjectRef

extension ObjectRef {
    /// The concrete entity (SwiftData's `entityName`).
    public var entityName: String { entity }

    /// An identifier of the record `id` of `entityName`.
    public init(entityName: String, id: String) { self.init(entity: entityName, id: id) }
}

/// What other writers committed to the new schema since the context last merged, as one history
/// transaction.
public struct ModelRemoteChange: Sendable, Hashable {
    /// The history token.
    public var token: Int64
    /// The transaction's author (coexistd's `author`, `coexistd` by default, for what it mirrored from the
    /// Core Data tables).
    public var author: String?
    /// Records it inserted.
    public var inserted: Set<PersistentIdentifier> = []
    /// Records it updated.
    public var updated: Set<PersistentIdentifier> = []
    /// Records it deleted.
    public var deleted: Set<PersistentIdentifier> = []
    /// Records the context holds with unsaved changes that this transaction also changed or deleted: the
    /// context keeps the app's values for them.
    public var conflicts: Set<PersistentIdentifier> = []

    /// The entities touched.
    public var entities: Set<String> { Set(inserted.union(updated).union(deleted).map(\.entityName)) }
}

extension ModelContext {
    /// The identifier of a registered record (nil for a record the context does not hold).
    public func persistentIdentifier<Model: PersistentModel>(of record: Model) -> PersistentIdentifier? {
        registrations[ObjectIdentifier(record)]?.ref
    }

    /// The record with identifier `identifier`: the one the context holds, else loaded from the store; nil
    /// when the store no longer holds it.
    public func model<Model: PersistentModel>(
        for identifier: PersistentIdentifier,
        as type: Model.Type
    ) throws
        -> Model?
    {
        try materialize(identifier, as: type) as? Model
    }

    /// Brings the records the context holds up to date with what other processes (the Core Data app
    /// through coexistd, another process of this stack) committed since the last merge, reading the shared
    /// history: changed records take the stored values, deleted ones leave the context. Records with unsaved
    /// changes are never overwritten: they are reported as ``ModelRemoteChange/conflicts``. Returns one
    /// change per transaction that changed the new schema, in token order; the context's own saves are
    /// skipped.
    /// When history it had not merged was deleted meanwhile, it throws ``LiveError/historyExpired(after:resumedAfter:)``
    /// once (fetch again what matters) and goes on from there at the next call.
    @discardableResult
    public func mergeChangesFromStore() throws -> [ModelRemoteChange] {
        guard try HistoryTables.exist(store.connection) else { return [] }
        if let resumed = try HistoryGaps.deleted(after: lastMergedToken, store.connection) {
            let after = lastMergedToken
            lastMergedToken = resumed
            throw LiveError.historyExpired(after: after, resumedAfter: resumed)
        }
        let reader = try HistoryReader(connection: store.connection, decoder: NoLegacyDecoding())
        var merged: [ModelRemoteChange] = []
        var changedRecords: [Registration] = []
        // Held records another process deleted: they leave the context and the relationships holding them.
        var gone: [Registration] = []
        // Decided before anything is applied: a deletion below must not make a holder look edited. A new record
        // only a relationship holds makes its holder changed (reloaded, the holder would lose it).
        registerReachableRecords()
        let unchanged = Set(registrations.filter { !$0.value.deleted && !isChanged($0.value) }.map(\.key))
        let isUnchanged = { (registration: Registration) in unchanged.contains(ObjectIdentifier(registration.object)) }
        while true {
            let page = try reader.transactions(after: lastMergedToken, limit: 500)
            for transaction in page {
                lastMergedToken = transaction.token
                if ownTokens.remove(transaction.token) != nil { continue }
                var change = ModelRemoteChange(token: transaction.token, author: transaction.author)
                for entry in transaction.changes where entry.side == .new {
                    guard let entity = entry.entity, let id = entry.objectID else { continue }
                    let identifier = PersistentIdentifier(entityName: entity, id: id)
                    let held = byRef[ObjectRef(entity: entity, id: id)]
                    if let held, !isUnchanged(held) { change.conflicts.insert(identifier) }
                    switch entry.type {
                    case .insert: change.inserted.insert(identifier)
                    case .update:
                        change.updated.insert(identifier)
                        if let held, isUnchanged(held) { changedRecords.append(held) }
                    case .delete:
                        change.deleted.insert(identifier)
                        if let held, isUnchanged(held) {
                            unregister(held)
                            gone.append(held)
                        }
                    }
                }
                if !change.entities.isEmpty { merged.append(change) }
            }
            if page.count < 500 { break }
        }
        guard !merged.isEmpty else { return [] }
        dropGone(gone, keepingFor: isUnchanged)
        for registration in changedRecords where registrations[ObjectIdentifier(registration.object)] != nil {
            guard let values = try store.values(of: registration.ref) else { continue }
            for attribute in registration.schema.attributes {
                _ = attribute.write(registration.object, values[attribute.name] ?? .null)
            }
            registration.unfetched = []
        }
        // Relationships may have changed on either side: every unchanged record reads them again.
        try reload(insertionOrder.compactMap { registrations[$0] }.filter(isUnchanged))
        return merged
    }

    /// Takes the records of `gone` (deleted by another process, unregistered) out of the relationships of
    /// the records that still hold them and are not read again (those with unsaved changes): held there, a
    /// record would be inserted again by the next save. The store dropped them too, so the holders' saved
    /// state drops them as well: their own changes stay theirs.
    private func dropGone(_ gone: [Registration], keepingFor isUnchanged: (Registration) -> Bool) {
        guard !gone.isEmpty else { return }
        let objects = Set(gone.lazy.map { ObjectIdentifier($0.object) })
        let refs = Set(gone.lazy.map(\.ref))
        for registration in registrations.values where !isUnchanged(registration) {
            for (slot, relationship) in registration.schema.relationships.enumerated() {
                let targets = relationship.read(registration.object)
                if targets.contains(where: { objects.contains(ObjectIdentifier($0)) }) {
                    relationship.write(registration.object, targets.filter { !objects.contains(ObjectIdentifier($0)) })
                }
                if let saved = registration.snapshot?.relationships[slot], saved.contains(where: refs.contains) {
                    registration.snapshot?.relationships[slot] = saved.filter { !refs.contains($0) }
                }
            }
        }
    }

    func isChanged(_ registration: Registration) -> Bool {
        guard let snapshot = registration.snapshot else { return true }
        let now = currentSnapshot(registration)
        return now.attributes != snapshot.attributes || now.relationships != snapshot.relationships
    }
}

/// The new side reads only its own changes; Core Data rows are never decoded here.
struct NoLegacyDecoding: LegacyChangeDecoding {
    func decode(
        token: Int64,
        entityNumber: Int,
        type: ChangeType,
        columns: [UInt8]?,
        tombstones: [SQLiteValue]
    )
        -> LegacyChangeDetails
    {
        LegacyChangeDetails(entity: nil, properties: nil, tombstone: [:])
    }
}
