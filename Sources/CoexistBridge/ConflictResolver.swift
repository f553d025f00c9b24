import CoexistHistory
import CoexistSQLite

/// Finds properties changed on both sides within the pending window (since the last mirrored state) and
/// decides, by the configured policy, which change loses: a losing change's property is not mirrored, so
/// both sides converge on the winner's value. Every conflict is recorded in `coexist_conflict`.
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

    let engine: SyncEngine
    /// Tokens that changed each key, per side, in the window.
    private var changes: [Key: [(token: Int64, side: Side)]] = [:]
    private var losses: [String: Loss] = [:]

    init(engine: SyncEngine, window: [HistoryTransaction]) throws {
        self.engine = engine
        for transaction in window where transaction.author != engine.configuration.author {
            for change in transaction.changes where change.type == .update {
                guard let identity = try identity(of: change) else { continue }
                for property in change.properties ?? [] {
                    changes[Key(root: identity.root, id: identity.id, property: property), default: []].append(
                        (transaction.token, transaction.side)
                    )
                }
            }
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
        guard let identity = try identity(of: change) else { return false }
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
            engine.report(
                "conflict on \(loss.key.root) \(loss.key.id) \(loss.key.property): \(loss.winner.side) token \(loss.winner.token) "
                    + "wins over \(loss.loser.side) token \(loss.loser.token) (\(engine.configuration.conflictPolicy.rawValue))"
            )
        }
        defer { losses.removeAll() }
        return losses.count
    }
}
