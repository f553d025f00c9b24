import CoexistHistory
import CoexistSQLite

/// Finds properties changed on both sides within the pending window (since the last mirrored state) and
/// decides, by the configured policy, which change loses: a losing change's property is not mirrored, so
/// both sides converge on the winner's value. Every conflict is recorded in `coexist_conflict`.
///
/// Kept by the engine across passes, in step with its read-ahead window: ``add(_:)`` as transactions enter
/// the window, ``forget(through:)`` as the cursor passes them. A legacy change whose object has no recorded
/// identity yet is retried each pass (``resolvePending()``) until it has one. The engine drops the whole
/// resolver whenever a pass fails, so nothing learnt in a rolled-back transaction survives.
final class ConflictResolver {
    struct Key: Hashable {
        let root: String
        let id: String
        let property: String
    }

    struct Loss {
        let winner: (token: Int64, side: Side)
        let loser: (token: Int64, side: Side)
        let key: Key
    }

    unowned let engine: SyncEngine
    /// Tokens that changed each key, per side, in the window.
    private var changes: [Key: [(token: Int64, side: Side)]] = [:]
    /// The keys each token added, to forget them.
    private var keysByToken: [Int64: [Key]] = [:]
    /// Updates not looked at yet: the identity of an object is looked up (and its properties keyed) only
    /// once both sides have updates in the window, since a conflict needs one from each; and a legacy
    /// object's identity is not known before it is mirrored.
    private var unresolved: [(token: Int64, side: Side, change: HistoryChange)] = []
    /// The updates in the window, per side and per token.
    private var updatesBySide: [Side: Int] = [:]
    private var updatesByToken: [Int64: (side: Side, count: Int)] = [:]
    private var losses: [String: Loss] = [:]

    /// Whether both sides have updates in the window (else nothing can conflict).
    private var bothSidesUpdate: Bool { (updatesBySide[.legacy] ?? 0) > 0 && (updatesBySide[.new] ?? 0) > 0 }

    init(engine: SyncEngine) {
        self.engine = engine
    }

    /// Takes in the updates of a transaction entering the window.
    func add(_ transaction: HistoryTransaction) throws {
        guard transaction.author != engine.configuration.author else { return }
        // Computed once: a transaction's side looks at each of its changes.
        let side = transaction.side
        var count = 0
        for change in transaction.changes where change.type == .update {
            unresolved.append((transaction.token, side, change))
            count += 1
        }
        guard count > 0 else { return }
        updatesBySide[side, default: 0] += count
        updatesByToken[transaction.token] = (side, count)
    }

    private func add(_ change: HistoryChange, token: Int64, side: Side) throws {
        guard let identity = try identity(of: change) else {
            if change.side == .legacy && change.entity != nil && change.objectPK != nil {
                unresolved.append((token, side, change))
            }
            return
        }
        for property in change.properties ?? [] {
            let key = Key(root: identity.root, id: identity.id, property: property)
            changes[key, default: []].append((token, side))
            keysByToken[token, default: []].append(key)
        }
    }

    /// Keys the updates not looked at yet, when both sides have updates in the window; those whose identity
    /// is still unknown wait for the next pass.
    func resolvePending(force: Bool = false) throws {
        guard !unresolved.isEmpty, bothSidesUpdate || force else { return }
        let pending = unresolved
        unresolved.removeAll()
        for entry in pending { try add(entry.change, token: entry.token, side: entry.side) }
    }

    /// Forgets every change at or before `token` (the cursor passed them).
    func forget(through token: Int64) {
        for (changed, keys) in keysByToken where changed <= token {
            for key in keys {
                changes[key]?.removeAll { $0.token <= token }
                if changes[key]?.isEmpty == true { changes[key] = nil }
            }
            keysByToken[changed] = nil
        }
        unresolved.removeAll { $0.token <= token }
        for (changed, updates) in updatesByToken where changed <= token {
            updatesBySide[updates.side, default: 0] -= updates.count
            updatesByToken[changed] = nil
        }
    }

    /// The (root entity, identity) of a changed object, when both sides can know it.
    func identity(of change: HistoryChange) throws -> (root: String, id: String)? {
        guard let entity = change.entity else { return nil }
        let root = engine.identities.root(of: entity)
        switch change.side {
        case .new: return change.objectID.map { (root, $0) }
        case .legacy:
            guard let pk = change.objectPK, let id = try engine.identities.recordedID(root: root, pk: pk) else {
                return nil
            }
            return (root, id)
        }
    }

    /// Whether `property` of the object changed at `token` on `side` loses to the other side's change.
    func loses(_ change: HistoryChange, property: String, token: Int64) throws -> Bool {
        guard bothSidesUpdate, let identity = try identity(of: change) else { return false }
        let key = Key(root: identity.root, id: identity.id, property: property)
        let others = (changes[key] ?? []).filter { $0.side != change.side }
        guard !others.isEmpty else { return false }
        let winner: (token: Int64, side: Side)?
        switch engine.configuration.conflictPolicy {
        case .laterWins: winner = others.filter { $0.token > token }.max { $0.token < $1.token }
        case .legacyWins: winner = change.side == .new ? others.max { $0.token < $1.token } : nil
        case .newWins: winner = change.side == .legacy ? others.max { $0.token < $1.token } : nil
        }
        guard let winner else { return false }
        losses["\(key.root)/\(key.id)/\(key.property)/\(token)"] = Loss(
            winner: winner,
            loser: (token, change.side),
            key: key
        )
        return true
    }

    /// Whether the window holds a change on `side` to any of `properties` of the object `id` of `root`.
    func hasPendingChange(root: String, id: String, to properties: [String], on side: Side) throws -> Bool {
        guard (updatesBySide[side] ?? 0) > 0 else { return false }
        try resolvePending(force: true)
        return properties.contains { property in
            changes[Key(root: root, id: id, property: property)]?.contains { $0.side == side } == true
        }
    }

    /// Records the conflicts of the pass; returns how many.
    func record() throws -> Int {
        for loss in losses.values.sorted(by: { $0.loser.token < $1.loser.token }) {
            try engine.connection.run(
                """
                INSERT INTO coexist_conflict (detected_at, entity, object_id, property, winner_token, winner_side,
                    loser_token, loser_side, policy) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    .real(TransactionWriter.now()), .text(loss.key.root), .text(loss.key.id), .text(loss.key.property),
                    .integer(loss.winner.token), .text(loss.winner.side.rawValue), .integer(loss.loser.token),
                    .text(loss.loser.side.rawValue), .text(engine.configuration.conflictPolicy.rawValue),
                ]
            )
            var notice = BridgeNotice(
                .conflict,
                "conflict on \(loss.key.root) \(loss.key.id) \(loss.key.property): \(loss.winner.side) token "
                    + "\(loss.winner.token) wins over \(loss.loser.side) token \(loss.loser.token) "
                    + "(\(engine.configuration.conflictPolicy.rawValue))"
            )
            notice.token = loss.winner.token
            notice.side = loss.winner.side
            notice.entity = loss.key.root
            notice.object = loss.key.id
            notice.property = loss.key.property
            engine.report(notice)
        }
        defer { losses.removeAll() }
        return losses.count
    }
}
