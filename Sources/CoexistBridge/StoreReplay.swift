import CoexistHistory
public import CoexistLegacyStore
import CoexistModel

/// Replays a range of one store's Core Data history into another store of the same model
/// (`coexistctl history replay --to-store`): a scratch copy of the store taken earlier, a test fixture.
///
/// Each source transaction becomes one save of the target, in token order, with the same author, context,
/// bundle and process, so the target's own history records it. Objects keep their `Z_PK` (the target is a
/// copy: the same keys name the same objects). Core Data's history holds no values, so the values written
/// are the source's as of now: an inserted or updated object gets its current attributes (the changed ones
/// for an update) and relationships; an object the source deleted since gets its tombstone values, and its
/// delete comes later in the range. New-schema changes are not replayed: their mirrors are in the legacy
/// history the range holds.
public struct StoreReplay {
    /// What a replay did.
    public struct Result: Sendable, Equatable {
        /// Source transactions replayed (each one target save, when it changed anything).
        public var transactions = 0
        /// Legacy changes applied.
        public var changes = 0
        /// Changes that could not be applied, one line each (an object missing from the target, say).
        public var skipped: [String] = []
    }

    let source: LegacyStore
    let target: LegacyStore
    let model: Model

    /// A replay from `source` into `target`; throws unless both stores have the same model.
    public init(source: LegacyStore, target: LegacyStore) throws {
        guard let model = source.model, let other = target.model else {
            throw BridgeError.modelMismatch("\(source.path) or \(target.path) carries no model")
        }
        let differences = model.structuralDifferences(from: other)
        guard differences.isEmpty else {
            throw BridgeError.modelMismatch(
                "\(target.path) has another model than \(source.path): "
                    + differences.prefix(5).joined(separator: "; ")
            )
        }
        self.source = source
        self.target = target
        self.model = model
    }

    /// Replays the legacy transactions with tokens in (`after`, `through`]; `progress` is told each token.
    public func run(after: Int64, through: Int64, progress: (Int64) -> Void = { _ in }) throws -> Result {
        let reader = try HistoryReader(store: source)
        var filter = HistoryFilter()
        filter.since = after
        filter.until = through
        var result = Result()
        while true {
            let page = try reader.transactions(matching: filter, limit: 64)
            guard let last = page.last else { break }
            for transaction in page {
                let changes = transaction.changes.filter { $0.side == .legacy && $0.entity != nil }
                guard !changes.isEmpty else { continue }
                try replay(transaction, changes, into: &result)
                result.transactions += 1
                progress(transaction.token)
            }
            filter.since = last.token
        }
        return result
    }

    private func replay(_ transaction: HistoryTransaction, _ changes: [HistoryChange], into result: inout Result) throws
    {
        let metadata = SaveMetadata(
            author: transaction.author,
            contextName: transaction.contextName,
            bundleID: transaction.bundleID,
            processName: transaction.processName
        )
        var skipped: [String] = []
        var applied = 0
        _ = try target.save(metadata) { save in
            save.enforcesMandatoryValues = false
            var relationships: [(ObjectID, [String])] = []
            for change in changes {
                guard let entityName = change.entity, let entity = model.entity(named: entityName),
                    let pk = change.objectPK
                else { continue }
                let id = ObjectID(entity: entityName, pk: pk)
                let current = try source.object(id)
                let stored = model.allAttributes(of: entity).filter { !$0.isTransient && !$0.isDerived }.map(\.name)
                let links = model.allRelationships(of: entity).filter { !$0.isTransient }.map(\.name)
                switch change.type {
                case .insert:
                    let values = (current?.attributes ?? change.tombstone).filter { stored.contains($0.key) }
                    do {
                        _ = try save.insert(entityName, values, pk: pk)
                    } catch {
                        skipped.append("token \(transaction.token): insert \(id): \(error)")
                        continue
                    }
                    if current != nil { relationships.append((id, links)) }
                case .update:
                    guard let current else { continue }  // deleted since: its delete follows in the range
                    guard try target.object(id) != nil else {
                        skipped.append("token \(transaction.token): update \(id): not in \(target.path)")
                        continue
                    }
                    let names = change.properties ?? stored + links
                    let values = current.attributes.filter { names.contains($0.key) && stored.contains($0.key) }
                    if !values.isEmpty { try save.update(id, values) }
                    relationships.append((id, names.filter(links.contains)))
                case .delete:
                    guard try target.object(id) != nil else { continue }
                    try save.delete(id, applyingRules: false)  // the rules' own changes are in the range
                }
                applied += 1
            }
            for (id, names) in relationships {
                for name in names { try sync(id, name, save) }
            }
        }
        result.changes += applied
        result.skipped += skipped
    }

    /// Sets relationship `name` of `id` in the target to what it holds in the source now (the objects the
    /// target has).
    private func sync(_ id: ObjectID, _ name: String, _ save: LegacySave) throws {
        guard let entity = model.entity(named: id.entity),
            let relationship = model.allRelationships(of: entity).first(where: { $0.name == name })
        else { return }
        var desired: [ObjectID] = []
        for object in try source.related(id, name) where try target.object(object) != nil { desired.append(object) }
        if !relationship.isToMany {
            let present = try target.related(id, name).first
            if present != desired.first { try save.setToOne(id, name, desired.first) }
        } else if relationship.isOrdered {
            if try target.related(id, name) != desired { try save.setOrdered(id, name, desired) }
        } else {
            let present = Set(try target.related(id, name))
            let wanted = Set(desired)
            let added = desired.filter { !present.contains($0) }
            let removed = try target.related(id, name).filter { !wanted.contains($0) }
            if !added.isEmpty { try save.add(id, to: name, added) }
            if !removed.isEmpty { try save.remove(id, from: name, removed) }
        }
    }
}
