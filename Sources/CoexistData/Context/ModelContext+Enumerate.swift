import CoexistStore

extension ModelContext {
    /// Calls `block` with each record `descriptor` selects, in its order, reading them `batchSize` at a time
    /// from one query (SwiftData's `enumerate(_:batchSize:allowEscapingMutations:block:)`): after each batch,
    /// the records it made that the block left unchanged are released, so memory follows the batch, not the
    /// result. (A record's relationships are loaded with it: records that reach many others, such as a
    /// category holding every task, keep those for the batch.)
    ///
    /// A block that changes records: with `allowEscapingMutations`, the changed ones stay in the context for
    /// a later ``save()``; without, the enumeration stops with an error naming the first one, and those
    /// changes stay pending. The block must not save (the query is still being read). A sort that runs in
    /// memory (on strings) needs every record first: then the records are fetched at once, as
    /// ``fetch(_:)`` does.
    public func enumerate<Model: PersistentModel>(
        _ descriptor: FetchDescriptor<Model>,
        batchSize: Int = 5_000,
        allowEscapingMutations: Bool = false,
        _ block: (Model) throws -> Void
    ) throws {
        var plan = try plan(descriptor, everyColumn: true)
        if !plan.sortedInSQL, !descriptor.sortBy.isEmpty {
            for record in try fetch(descriptor) { try block(record) }
            return
        }
        // Its own statement: a fetch in the block with the same descriptor must not reset this one.
        plan.sql += " -- enumerate"
        let size = max(1, batchSize)
        // New records the held ones reach are the app's before the block runs, not the block's doing.
        registerReachableRecords()
        let held = Set(registrations.keys)
        var skip = plan.limitedInSQL ? 0 : max(0, descriptor.fetchOffset ?? 0)
        var remaining = plan.limitedInSQL ? Int.max : max(0, descriptor.fetchLimit ?? .max)
        var batch: [(ref: ObjectRef, values: StoredRow?)] = []
        var layouts = RecordLayouts(schema: Model.erasedSchema, only: try fetchedNames(descriptor, plan))
        func flush() throws {
            try materialize(batch.compactMap { $0.values })
            for (ref, _) in batch where remaining > 0 {
                guard let record = byRef[ref]?.object as? Model else { continue }
                if registrations[ObjectIdentifier(record)]?.deleted == true { continue }
                if !plan.exact, let filter = descriptor.combined, try !filter.evaluate(record) { continue }
                if skip > 0 {
                    skip -= 1
                    continue
                }
                remaining -= 1
                try block(record)
            }
            batch.removeAll(keepingCapacity: true)
            try release(keeping: held, allowEscapingMutations: allowEscapingMutations)
        }
        try store.connection.forEachRow(plan.sql, plan.arguments) { row in
            guard remaining > 0 else { return }
            let ref = ObjectRef(entity: row.text(1) ?? Model.schema.entity, id: row.text(0) ?? "")
            if let held = byRef[ref] {
                // A held partial record is filled as a fetch fills it: from a full row of its own type.
                if !held.unfetched.isEmpty, layouts.only == nil, held.schema.type == layouts.schema.type {
                    try fill(held, from: layouts.read(row, ref, store))
                }
                batch.append((ref, nil))
            } else {
                batch.append((ref, try layouts.read(row, ref, store)))
            }
            if batch.count == size { try flush() }
        }
        try flush()
    }

    /// Forgets the records registered since `held` that are unchanged, except those a kept record reaches
    /// through its relationships (directly or through others): a later save walks from the kept records and
    /// must find every record they reach registered, or it would insert it again. Changed ones stay when
    /// `allowed`, else the first is named in an error (and nothing is released).
    private func release(keeping held: Set<ObjectIdentifier>, allowEscapingMutations allowed: Bool) throws {
        var kept: Set<ObjectIdentifier> = []
        for (key, registration) in registrations where !held.contains(key) {
            guard registration.deleted || isChanged(registration) else { continue }
            guard allowed else {
                throw StoreError.validation(
                    path: store.path,
                    detail:
                        "enumerate: the block changed \(registration.ref); pass allowEscapingMutations: true to keep such records for a later save"
                )
            }
            kept.insert(key)
        }
        // Everything the kept records reach stays too.
        var queue = Array(kept)
        while let key = queue.popLast() {
            guard let registration = registrations[key] else { continue }
            for relationship in registration.schema.relationships {
                for object in relationship.read(registration.object) {
                    let reached = ObjectIdentifier(object)
                    if registrations[reached] != nil, !held.contains(reached), kept.insert(reached).inserted {
                        queue.append(reached)
                    }
                }
            }
        }
        var released: Set<ObjectIdentifier> = []
        for key in registrations.keys where !held.contains(key) && !kept.contains(key) { released.insert(key) }
        guard !released.isEmpty else { return }
        for key in released {
            if let registration = registrations.removeValue(forKey: key) { forgetRef(of: registration) }
        }
        insertionOrder.removeAll { released.contains($0) }
    }
}
