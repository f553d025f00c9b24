public import CoexistHistory
import CoexistLegacyStore
import CoexistStore

extension SyncEngine {
    /// What a repair wrote.
    public struct RepairResult: Sendable, Equatable {
        /// Objects re-applied from the source side (created or updated on the other).
        public var applied = 0
        /// Objects deleted from the target side because the source no longer holds them.
        public var deleted = 0
        /// The tokens of the repair's saves (none when nothing differed).
        public var tokens: [Int64] = []
    }

    /// Makes each object of `pairs` on the side opposite `source` equal to its current state on `source`,
    /// in one write transaction (`verify --repair`, `history replay --into`).
    ///
    /// An object `source` holds is re-applied through the mirror code as if just inserted: created on the
    /// other side when missing there, every attribute and relationship set, derived values after. An object
    /// `source` no longer holds is deleted from the other side (no delete rules: each object of the repair
    /// is handled itself). The saves are the bridge's own, so they are never mirrored back; applying the same
    /// repair again writes nothing.
    public func repair(_ pairs: [Verifier.ObjectPair], from source: Side) throws -> RepairResult {
        defer { dropReadAhead() }  // identities may have changed: read the window again
        return try connection.write {
            var result = RepairResult()
            let metadata = bridgeMetadata(contextName: "repair")
            switch source {
            case .legacy:
                var present: [ObjectID] = []
                var gone: [ObjectRef] = []
                for pair in pairs {
                    if let id = pair.legacy, try legacy.object(id) != nil {
                        present.append(id)
                    } else if let ref = pair.new {
                        gone.append(ref)
                    }
                }
                if !gone.isEmpty {
                    let token = try new.save(metadata) { save in
                        for ref in gone where try new.values(of: ref) != nil {
                            try save.delete(ref, applyingRules: false)
                            result.deleted += 1
                        }
                    }.token
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
            case .new:
                var present: [ObjectRef] = []
                var gone: [ObjectID] = []
                for pair in pairs {
                    if let ref = pair.new, try new.values(of: ref) != nil {
                        present.append(ref)
                    } else if let id = pair.legacy {
                        gone.append(id)
                    }
                }
                if !gone.isEmpty {
                    let token = try legacy.save(metadata) { save in
                        for id in gone where try legacy.object(id) != nil {
                            try save.delete(id, applyingRules: false)
                            result.deleted += 1
                        }
                    }.token
                    for id in gone { try identities.forget(root: identities.root(of: id.entity), pk: id.pk) }
                    if let token { result.tokens.append(token) }
                }
                if !present.isEmpty {
                    let mirror = NewToLegacy(engine: self, conflicts: ConflictResolver(engine: self))
                    if let token = try mirror.mirror(refs: present, metadata) { result.tokens.append(token) }
                    result.applied = present.count
                }
            }
            try checkForeignKeys()
            return result
        }
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
