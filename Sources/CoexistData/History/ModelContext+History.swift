import CoexistHistory
import CoexistSQLite
import CoexistStore
import Foundation

extension ModelContext {
    /// The history transactions `descriptor` selects, oldest first (SwiftData's `fetchHistory`), each with its
    /// changes to the new schema's records.
    public func fetchHistory(_ descriptor: HistoryDescriptor) throws -> [DefaultHistoryTransaction] {
        guard try HistoryTables.exist(store.connection) else { return [] }
        var filter = HistoryFilter()
        filter.since = max(0, descriptor.after ?? 0)
        if let before = descriptor.before { filter.until = max(before, 1) - 1 }
        filter.author = descriptor.author
        let reader = try HistoryReader(connection: store.connection, decoder: NoLegacyDecoding())
        let wanted = max(0, descriptor.fetchLimit ?? .max)
        var result: [DefaultHistoryTransaction] = []
        while result.count < wanted {
            let limit = min(500, wanted - result.count)
            let page = try reader.transactions(matching: filter, limit: limit)
            result += page.map(Self.transaction)
            guard page.count == limit, let last = page.last else { break }
            filter.since = last.token
        }
        return result
    }

    /// Deletes the history older than `descriptor.before` (SwiftData's `deleteHistory`), in one SQLite
    /// transaction, but never what coexistd has not mirrored yet or a durable consumer has not acknowledged;
    /// returns how many transactions went. Only `before` applies: history is deleted from its oldest end.
    @discardableResult
    public func deleteHistory(_ descriptor: HistoryDescriptor) throws -> Int {
        guard let before = descriptor.before else {
            throw StoreError.validation(path: store.path, detail: "deleteHistory needs a token to delete before")
        }
        guard try HistoryTables.exist(store.connection) else { return 0 }
        let connection = store.connection
        return try connection.write {
            var through = max(before, 1) - 1
            if let hold = try HistoryHolds.bound(connection) { through = min(through, hold) }
            return through > 0 ? try HistoryPruner.prune(connection, upTo: through) : 0
        }
    }

    private static func transaction(_ transaction: HistoryTransaction) -> DefaultHistoryTransaction {
        var changes: [DefaultHistoryChange] = []
        for change in transaction.changes where change.side == .new {
            guard let entity = change.entity, let id = change.objectID else { continue }
            let identifier = PersistentIdentifier(entityName: entity, id: id)
            switch change.type {
            case .insert: changes.append(.insert(identifier))
            case .update: changes.append(.update(identifier, updatedAttributes: change.properties.map(Set.init)))
            case .delete: changes.append(.delete(identifier, tombstone: change.tombstone))
            }
        }
        return DefaultHistoryTransaction(
            token: transaction.token,
            timestamp: Date(timeIntervalSinceReferenceDate: transaction.timestamp),
            author: transaction.author,
            contextName: transaction.contextName,
            changes: changes
        )
    }
}
