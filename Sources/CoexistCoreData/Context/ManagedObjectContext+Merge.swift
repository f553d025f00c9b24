import CoexistHistory
import CoexistLegacyStore
import CoexistModel

/// What other writers committed since the context last merged, as one history transaction
/// (`NSPersistentStoreRemoteChange` with its history token).
public struct StoreRemoteChange: Sendable, Hashable {
    /// The history token of the transaction.
    public var token: Int64
    /// Its author (coexistd's `author`, `coexistd` by default, for what it mirrored from the new schema).
    public var author: String?
    /// Objects it inserted.
    public var inserted: Set<ManagedObjectID> = []
    /// Objects it updated.
    public var updated: Set<ManagedObjectID> = []
    /// Objects it deleted.
    public var deleted: Set<ManagedObjectID> = []
    /// Objects the context holds with unsaved changes that this transaction also changed or deleted: they
    /// keep the version the context read, so their next save meets the ``MergePolicy``.
    public var conflicts: Set<ManagedObjectID> = []

    /// The entities the transaction touched.
    public var entities: Set<String> { Set((inserted.union(updated).union(deleted)).map(\.entityName)) }
}

extension ManagedObjectContext {
    /// Brings every object the context holds up to date with what other processes committed since the last
    /// merge, reading the persistent history: changed objects read their new values on next use, deleted
    /// ones become deleted and leave the context; to-manys are read again. Objects with unsaved changes are
    /// never overwritten: they are reported as ``StoreRemoteChange/conflicts``. Returns one change per
    /// transaction that changed Core Data rows, in token order (the context's own saves are skipped).
    /// When history it had not merged was deleted meanwhile, it throws ``CoreDataError/historyExpired(after:resumedAfter:)``
    /// once (fetch again what matters) and goes on from there at the next call.
    @discardableResult
    public func mergeChangesFromStore() throws(CoreDataError) -> [StoreRemoteChange] {
        var merged: [StoreRemoteChange] = []
        do {
            guard try HistoryTables.exist(store.connection) else { return [] }
            if let resumed = try HistoryGaps.deleted(after: lastMergedToken, store.connection) {
                let after = lastMergedToken
                lastMergedToken = resumed
                throw CoreDataError.historyExpired(after: after, resumedAfter: resumed)
            }
            let reader = try HistoryReader(connection: store.connection, decoder: StoreChangeDecoder(store: store))
            while true {
                let page = try reader.transactions(after: lastMergedToken, limit: 500)
                for transaction in page {
                    lastMergedToken = transaction.token
                    if ownTokens.remove(transaction.token) != nil { continue }
                    // New-schema commits name no Core Data rows: they arrive when coexistd mirrors them.
                    let change = apply(transaction)
                    if !change.entities.isEmpty { merged.append(change) }
                }
                if page.count < 500 { break }
            }
        } catch let error as CoreDataError {
            throw error
        } catch {
            throw .store("\(error)")
        }
        if !merged.isEmpty {
            // Relationship changes show on either side: every held to-many is read again on next use, but
            // an object with unsaved changes keeps what its save is compared with.
            for object in registered.values where object.pending.isEmpty { object.snapshot?.toMany = [:] }
        }
        return merged
    }

    private func apply(_ transaction: HistoryTransaction) -> StoreRemoteChange {
        var change = StoreRemoteChange(token: transaction.token, author: transaction.author)
        for entry in transaction.changes where entry.side == .legacy {
            guard let entity = entry.entity, let pk = entry.objectPK else { continue }
            let id = ManagedObjectID(entityName: entity, pk: pk, storeIdentifier: storeIdentifier)
            let held = registered[id]
            if let held, !held.pending.isEmpty || held.isDeleted {
                change.conflicts.insert(id)
            }
            switch entry.type {
            case .insert:
                change.inserted.insert(id)
            case .update:
                change.updated.insert(id)
                if let held, held.pending.isEmpty, !held.isDeleted { held.snapshot = nil }
            case .delete:
                change.deleted.insert(id)
                if let held, held.pending.isEmpty {
                    held.isDeleted = true
                    forget(held)
                }
            }
        }
        return change
    }
}
