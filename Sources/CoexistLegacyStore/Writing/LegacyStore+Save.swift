public import CoexistHistory
import CoexistModel
import CoexistSQLite

extension LegacyStore {
    /// Runs `body` as one save: one SQLite `BEGIN IMMEDIATE` transaction holding the data changes, the new
    /// `Z_MAX` values and the persistent-history transaction that records them.
    ///
    /// Either everything is committed or nothing: any error thrown by `body` or by a rule rolls the whole
    /// save back. A save that changes nothing writes no history. The store must be open for writing. Called
    /// inside a transaction already open on the connection, the save joins it (as a savepoint).
    ///
    /// - Parameters:
    ///   - metadata: author, context, bundle and process names recorded with the history transaction.
    ///   - timestamp: the transaction time in seconds since 2001; now when nil.
    @discardableResult
    public func save(
        _ metadata: SaveMetadata,
        timestamp: Double? = nil,
        _ body: (LegacySave) throws -> Void
    ) throws -> SaveResult {
        let (model, schema) = try requireModel()
        let run = {
            let save = LegacySave(store: self, model: model, schema: schema)
            try body(save)
            return try save.finish(metadata: metadata, timestamp: timestamp ?? TransactionWriter.now())
        }
        // Inside a caller's transaction (the bridge's), the save is a savepoint of it.
        return try connection.isAutocommit ? connection.write(run) : connection.savepoint("coexist_save", run)
    }
}

extension LegacySave {
    func finish(metadata: SaveMetadata, timestamp: Double) throws -> SaveResult {
        ledger.finish()
        guard !ledger.order.isEmpty else {
            try keys.flush()
            return SaveResult(token: nil, changes: [])
        }
        let needed = model.entities.map { TombstoneLayout(entity: $0, model: model).attributes.count }.max() ?? 0
        let tombstoneColumns = try HistoryTables.ensure(connection, tombstones: needed)
        store.tables = try StoreSchema.readTables(connection)
        var changes: [HistoryChange] = []
        var tombstones: [[SQLiteValue]] = []
        for id in ledger.order {
            guard let entry = pending[id], let entity = model.entity(named: id.entity),
                let mapping = schema.entities[id.entity]
            else { continue }
            var change = HistoryChange(
                changeID: 0,
                side: .legacy,
                type: entry.type,
                entityNumber: mapping.number,
                entity: id.entity,
                objectPK: id.pk
            )
            if entry.type == .update {
                let bitmap = store.bitmap(of: entity) ?? PropertyBitmap(entity: entity, model: model)
                change.columns = bitmap.encode(entry.properties)
                change.properties = entry.properties
            }
            if entry.type == .delete {
                change.tombstone = entry.tombstone?.values ?? [:]
                tombstones.append(Array((entry.tombstone?.stored ?? []).prefix(tombstoneColumns)))
            } else {
                tombstones.append([])
            }
            changes.append(change)
        }
        let token = try TransactionWriter(connection: connection, keys: keys).writeTransaction(
            metadata,
            timestamp: timestamp
        )
        let written = try LegacyChangeWriter(connection: connection, keys: keys).write(
            changes,
            rawTombstones: tombstones,
            token: token
        )
        try keys.flush()
        return SaveResult(token: token, changes: written)
    }
}
