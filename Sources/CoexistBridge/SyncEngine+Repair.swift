public import CoexistHistory
import CoexistLegacyStore
import CoexistStore

extension SyncEngine {
    /// What a repair wrote.
    public struct RepairResult: Sendable, Equatable {
        /// Objects re-applied from the source side (created or updated on the other).
        public var applied = 0
        /// Objects deleted from the target side because the source lost them after they were mirrored.
        public var deleted = 0
        /// The tokens of the repair's saves (none when nothing differed).
        public var tokens: [Int64] = []
        /// Objects left as they are, one line each with why (parked, or never mirrored: deleting them from
        /// the side that has them would lose them).
        public var skipped: [String] = []
    }

    /// Why a repair cannot run now.
    public struct RepairRefused: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// Makes each object of `pairs` on the side opposite `source` equal to its current state on `source`,
    /// in one write transaction (`verify --repair`, `history replay --into`).
    ///
    /// Only on a caught-up bridge (cursor at the last token; the caller runs ``catchUp(afterEachPass:)``
    /// first): what differs then is a divergence, not a change on its way. An object `source` holds is
    /// re-applied through the mirror code as if just inserted: created on the other side when missing there,
    /// every attribute and relationship set, derived values after. An object `source` does not hold is
    /// deleted from the other side only when the identity map shows it was mirrored before (`source` lost
    /// it); one that never was, and every parked object or object of a parked transaction, is left as it is
    /// and named in ``RepairResult/skipped``. The saves are the bridge's own, so they are never mirrored
    /// back; applying the same repair again writes nothing.
    public func repair(_ pairs: [Verifier.ObjectPair], from source: Side) throws -> RepairResult {
        defer { dropReadAhead() }  // identities may have changed: read the window again
        return try connection.write {
            let cursor = try cursor() ?? 0
            let last = try reader.lastToken()
            guard cursor >= last else {
                throw RepairRefused(
                    description:
                        "\(connection.path): the bridge is \(last - cursor) transactions behind (cursor \(cursor), last token \(last)): mirror them first"
                )
            }
            var result = RepairResult()
            let held = try heldBack()
            var kept: [Verifier.ObjectPair] = []
            for pair in pairs {
                if let reason = try held.reason(pair, identities: identities) {
                    result.skipped.append("\(Self.describe(pair)): \(reason)")
                } else {
                    kept.append(pair)
                }
            }
            let metadata = bridgeMetadata(contextName: "repair")
            switch source {
            case .legacy: try repairFromLegacy(kept, metadata, &result)
            case .new: try repairFromNew(kept, metadata, &result)
            }
            try checkForeignKeys()
            return result
        }
    }

    private func repairFromLegacy(
        _ pairs: [Verifier.ObjectPair],
        _ metadata: SaveMetadata,
        _ result: inout RepairResult
    )
        throws
    {
        var present: [ObjectID] = []
        var gone: [ObjectRef] = []
        for pair in pairs {
            if let id = pair.legacy, try legacy.object(id) != nil {
                present.append(id)
            } else if let ref = pair.new {
                // Deleted from the new side only when it was mirrored before: the legacy side lost it.
                guard try identities.recordedPK(root: identities.root(of: ref.entity), id: ref.id) != nil else {
                    result.skipped.append("\(ref): only on the new side and never mirrored (--from new copies it)")
                    continue
                }
                gone.append(ref)
            }
        }
        if !gone.isEmpty {
            var deleted = 0
            let token = try new.save(metadata) { save in
                for ref in gone where try new.values(of: ref) != nil {
                    try save.delete(ref, applyingRules: false)
                    deleted += 1
                }
            }.token
            result.deleted += deleted
            try forget(gone)
            if let token { result.tokens.append(token) }
        }
        if !present.isEmpty {
            let mirror = LegacyToNew(engine: self, conflicts: ConflictResolver(engine: self))
            if let token = try mirror.mirror(objects: present, metadata, repairing: true) {
                result.tokens.append(token)
            }
            result.applied = present.count
        }
    }

    private func repairFromNew(
        _ pairs: [Verifier.ObjectPair],
        _ metadata: SaveMetadata,
        _ result: inout RepairResult
    )
        throws
    {
        var present: [ObjectRef] = []
        var gone: [ObjectID] = []
        for pair in pairs {
            if let ref = pair.new, try new.values(of: ref) != nil {
                present.append(ref)
            } else if let id = pair.legacy {
                // Deleted from the legacy side only when it was mirrored before: the new side lost it.
                guard try identities.recordedID(root: identities.root(of: id.entity), pk: id.pk) != nil else {
                    result.skipped.append("\(id): only on the legacy side and never mirrored (--from legacy copies it)")
                    continue
                }
                gone.append(id)
            }
        }
        if !gone.isEmpty {
            var deleted = 0
            let token = try legacy.save(metadata) { save in
                for id in gone where try legacy.object(id) != nil {
                    try save.delete(id, applyingRules: false)
                    deleted += 1
                }
            }.token
            result.deleted += deleted
            for id in gone { try identities.forget(root: identities.root(of: id.entity), pk: id.pk) }
            if let token { result.tokens.append(token) }
        }
        if !present.isEmpty {
            let mirror = NewToLegacy(engine: self, conflicts: ConflictResolver(engine: self))
            if let token = try mirror.mirror(refs: present, metadata) { result.tokens.append(token) }
            result.applied = present.count
        }
    }

    /// What the bridge itself still retries: parked objects and the objects of parked transactions.
    private struct HeldBack {
        var objects: Set<ObjectID> = []  // root entity and Z_PK
        var refs: Set<ObjectRef> = []  // root entity and id (new-side changes of parked transactions)

        func reason(_ pair: Verifier.ObjectPair, identities: IdentityMap) throws -> String? {
            if let id = pair.legacy, objects.contains(ObjectID(entity: identities.root(of: id.entity), pk: id.pk)) {
                return "parked: the bridge retries it"
            }
            if let ref = pair.new, refs.contains(ObjectRef(entity: identities.root(of: ref.entity), id: ref.id)) {
                return "parked: the bridge retries it"
            }
            return nil
        }
    }

    private func heldBack() throws -> HeldBack {
        var held = HeldBack()
        for row in try connection.rows("SELECT entity, pk FROM coexist_parked_object") {
            if let entity = row[0].textValue, let pk = row[1].integerValue {
                held.objects.insert(ObjectID(entity: entity, pk: pk))
            }
        }
        for token in try connection.rows("SELECT token FROM coexist_parked").compactMap({ $0.first?.integerValue }) {
            for change in try reader.transaction(token)?.changes ?? [] {
                guard let entity = change.entity else { continue }
                let root = identities.root(of: entity)
                if let pk = change.objectPK { held.objects.insert(ObjectID(entity: root, pk: pk)) }
                if let id = change.objectID { held.refs.insert(ObjectRef(entity: root, id: id)) }
            }
        }
        return held
    }

    static func describe(_ pair: Verifier.ObjectPair) -> String {
        [pair.legacy.map { "\($0)" }, pair.new.map { "\($0)" }].compactMap { $0 }.joined(separator: " = ")
    }

    /// Forgets the identity records of new-side objects that are gone.
    private func forget(_ refs: [ObjectRef]) throws {
        for ref in refs {
            let root = identities.root(of: ref.entity)
            if let pk = try identities.recordedPK(root: root, id: ref.id) { try identities.forget(root: root, pk: pk) }
        }
    }

    /// The objects the transactions in (`after`, `through`] touched, on either side, each as a pair of its
    /// two identities where the identity map knows both (`history replay --into`); read a page at a time.
    public func objects(
        touchedAfter after: Int64,
        through: Int64,
        progress: (Int64) -> Void = { _ in }
    ) throws -> [Verifier.ObjectPair] {
        var pairs: [Verifier.ObjectPair] = []
        var seen: Set<Verifier.ObjectPair> = []
        var filter = HistoryFilter()
        filter.since = after
        filter.until = through
        while true {
            let page = try reader.transactions(matching: filter, limit: 256)
            guard let last = page.last else { break }
            for change in page.flatMap(\.changes) {
                guard let entity = change.entity else { continue }
                let root = identities.root(of: entity)
                var pair = Verifier.ObjectPair(legacy: nil, new: nil)
                if change.side == .legacy, let pk = change.objectPK {
                    pair.legacy = ObjectID(entity: entity, pk: pk)
                    if let id = try identity(ofLegacy: entity, pk: pk) {
                        pair.new = ObjectRef(entity: try new.entityOfRow(id: id, rootEntity: root) ?? entity, id: id)
                    }
                } else if let id = change.objectID {
                    pair.new = ObjectRef(entity: entity, id: id)
                    if let pk = try identities.recordedPK(root: root, id: id) {
                        pair.legacy =
                            try legacy.object(ObjectID(entity: entity, pk: pk))?.id ?? ObjectID(entity: entity, pk: pk)
                    }
                }
                if seen.insert(pair).inserted { pairs.append(pair) }
            }
            filter.since = last.token
            progress(last.token)
        }
        return pairs
    }
}
