public import CoexistHistory
import CoexistSQLite

/// What a new-schema save wrote.
public struct NewSaveResult: Sendable, Hashable {
    /// The history token of the save (shared with the legacy side), nil when nothing changed.
    public var token: Int64?
    /// The recorded changes, one per object, in first-touched order.
    public var changes: [HistoryChange]
}

extension NewStore {
    /// Runs `body` as one save: one `BEGIN IMMEDIATE` transaction holding the new-schema changes, an
    /// `ATRANSACTION` row taking the next token of the shared sequence, and the `coexist_change` rows.
    ///
    /// All or nothing; a save that changes nothing writes no history. Creates Core Data's history tables
    /// when the file has none (so that both sides share one token sequence).
    @discardableResult
    public func save(
        _ metadata: SaveMetadata,
        timestamp: Double? = nil,
        _ body: (NewSave) throws -> Void
    ) throws -> NewSaveResult {
        let run = {
            let save = NewSave(store: self)
            try body(save)
            return try save.finish(metadata: metadata, timestamp: timestamp ?? TransactionWriter.now())
        }
        return try connection.isAutocommit ? connection.write(run) : connection.savepoint("coexist_save", run)
    }
}

extension NewSave {
    func finish(metadata: SaveMetadata, timestamp: Double) throws -> NewSaveResult {
        ledger.finish()
        guard ledger.order.contains(where: { pending[$0] != nil }) else {
            return NewSaveResult(token: nil, changes: [])
        }
        let values = recordsValues ? try recordedValues(ledger.order) : [:]
        let entries = ledger.order.compactMap { ref -> CompanionChanges.Entry? in
            guard let entry = pending[ref] else { return nil }
            return CompanionChanges.Entry(
                type: entry.type,
                entity: ref.entity,
                objectID: ref.id,
                properties: entry.properties,
                tombstone: entry.tombstone ?? [:],
                values: values[ref]
            )
        }
        try HistoryTables.ensure(connection, tombstones: 0)
        try CompanionChanges.ensure(connection)
        let keys = KeyAllocator(connection: connection)
        let token = try TransactionWriter(connection: connection, keys: keys).writeTransaction(
            metadata,
            timestamp: timestamp
        )
        try keys.flush()
        let changes = try CompanionChanges.write(entries, token: token, connection: connection)
        return NewSaveResult(token: token, changes: changes)
    }
}
