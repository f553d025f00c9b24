import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import Foundation

extension ManagedObjectContext {
    /// Runs a persistent-history request (`execute(_:)` with an `NSPersistentHistoryChangeRequest`): a fetch
    /// reads the shared history, a delete prunes it in one SQLite transaction (changes first, then their
    /// transactions; tokens stay increasing), never past what coexistd or a durable consumer still needs.
    public func execute(_ request: PersistentHistoryChangeRequest) throws(CoreDataError) -> PersistentHistoryResult {
        do {
            guard try HistoryTables.exist(store.connection) else {
                throw CoreDataError.store("\(path): the store keeps no persistent history")
            }
            switch request.kind {
            case .fetchAfterToken(let token):
                var filter = HistoryFilter()
                filter.since = token
                return .transactions(try fetchHistory(filter, request))
            case .fetchAfterDate(let date):
                var filter = HistoryFilter()
                filter.after = date.timeIntervalSinceReferenceDate
                return .transactions(try fetchHistory(filter, request))
            case .deleteBeforeToken(let token):
                return try deleteHistory(olderThan: nil) { _ in max(token, 1) - 1 }
            case .deleteBeforeDate(let date):
                // Through the newest transaction saved before `date`, and only those saved before it.
                let time = date.timeIntervalSinceReferenceDate
                return try deleteHistory(olderThan: time) { connection in
                    try connection.scalar("SELECT max(Z_PK) FROM ATRANSACTION WHERE ZTIMESTAMP < ?", [.real(time)])
                        .integerValue ?? 0
                }
            }
        } catch let error as CoreDataError {
            throw error
        } catch {
            throw .store("\(error)")
        }
    }

    private func fetchHistory(
        _ base: HistoryFilter,
        _ request: PersistentHistoryChangeRequest
    ) throws -> [PersistentHistoryTransaction] {
        var filter = base
        filter.author = request.author
        let reader = try HistoryReader(connection: store.connection, decoder: StoreChangeDecoder(store: store))
        var result: [PersistentHistoryTransaction] = []
        let wanted = request.fetchLimit > 0 ? request.fetchLimit : Int.max
        while result.count < wanted {
            let limit = min(500, wanted - result.count)
            let page = try reader.transactions(matching: filter, limit: limit)
            result += page.map(persistentTransaction)
            guard page.count == limit, let last = page.last else { break }
            filter.since = last.token
        }
        return result
    }

    private func persistentTransaction(_ transaction: HistoryTransaction) -> PersistentHistoryTransaction {
        var changes: [PersistentHistoryChange] = []
        for change in transaction.changes where change.side == .legacy {
            guard let entity = change.entity, let pk = change.objectPK else { continue }
            let type: PersistentHistoryChange.ChangeType =
                switch change.type {
                case .insert: .insert
                case .update: .update
                case .delete: .delete
                }
            changes.append(
                PersistentHistoryChange(
                    changeType: type,
                    changedObjectID: ManagedObjectID(entityName: entity, pk: pk, storeIdentifier: storeIdentifier),
                    updatedProperties: change.type == .update ? change.properties.map(Set.init) : nil,
                    tombstone: change.type == .delete ? change.tombstone : nil
                )
            )
        }
        return PersistentHistoryTransaction(
            token: transaction.token,
            timestamp: Date(timeIntervalSinceReferenceDate: transaction.timestamp),
            author: transaction.author,
            contextName: transaction.contextName,
            processName: transaction.processName,
            bundleID: transaction.bundleID,
            changes: changes
        )
    }

    /// Deletes through the token `wanted` names, held back to what coexistd and durable consumers no longer
    /// need; both read in the write transaction that deletes.
    private func deleteHistory(
        olderThan timestamp: Double?,
        _ wanted: (Connection) throws -> Int64
    ) throws -> PersistentHistoryResult {
        guard !isReadOnly else { throw CoreDataError.readOnly(path: path) }
        let connection = store.connection
        return try connection.write {
            var through = try wanted(connection)
            if let hold = try HistoryHolds.bound(connection) { through = min(through, hold) }
            guard through > 0 else { return .deleted(count: 0, through: nil) }
            let count = try HistoryPruner.prune(connection, upTo: through, olderThan: timestamp)
            return .deleted(count: count, through: count > 0 ? through : nil)
        }
    }
}
