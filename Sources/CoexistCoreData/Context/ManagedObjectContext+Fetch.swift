import CoexistLegacyStore
import CoexistModel
import CoexistSQLite

extension ManagedObjectContext {
    /// The objects `request` selects, in its order.
    ///
    /// Objects the context already holds are returned as they are (unsaved changes kept); objects deleted in
    /// the context are left out. With ``FetchRequest/includesPendingChanges`` (the default) objects inserted
    /// or changed and not saved yet are matched, sorted and counted in the window as they are held. With a
    /// ``FetchRequest/fetchBatchSize`` the objects are faults that load a batch at a time.
    public func fetch<Result: ManagedObject>(_ request: FetchRequest<Result>) throws(CoreDataError) -> [Result] {
        var query = try self.query(request)
        let pending = try pendingSelection(request)
        query.pending = pending?.rows
        var result: [Result] = []
        do {
            if request.fetchBatchSize > 0 {
                var inserted: [Int: ManagedObject] = [:]
                let ids = try store.objectIDs(query).enumerated().map { offset, id in
                    if let object = pending?.inserted[id.pk] { inserted[offset] = object }
                    return identity(id)
                }
                let loader = BatchLoader(ids: ids, size: request.fetchBatchSize)
                for (offset, id) in ids.enumerated() {
                    if let object = inserted[offset] {
                        if let typed = object as? Result { result.append(typed) }
                        continue
                    }
                    let object = self.object(with: id)
                    if object.isFault {
                        object.batch = loader
                        loader.positions[ObjectIdentifier(object)] = offset
                    }
                    if !object.isDeleted, let typed = object as? Result { result.append(typed) }
                }
                return result
            }
            // Objects are made as their rows are read, and the new ones registered together once the query
            // is done: a fetch that fails registers none (held faults it passed stay filled, with what the
            // file holds). A row comes once: the query's joins are to-ones, to-manys are `EXISTS`. The rows'
            // objects are gathered untyped and cast once at the end: an array of the generic `Result` costs a
            // type lookup at every append in the per-row closure. Each new object is kept with its identity:
            // registering reads no object again.
            var madeIDs: [ManagedObjectID] = []
            var made: [ManagedObject] = []
            var objects: [ManagedObject] = []
            // The identity map as it was, read without an access check per row; let go before it grows (a
            // copy still held then would make it copy its storage).
            do {
                let held = registered
                let inserted = pending?.inserted ?? [:]
                var classEntity = ""
                var classType = ManagedObject.self
                try store.forEachBlockObject(query) { stored in
                    if !inserted.isEmpty, let object = inserted[stored.id.pk] {
                        objects.append(object)
                        return
                    }
                    let id = identity(stored.id)
                    let object: ManagedObject
                    if !held.isEmpty, let known = held[id] {
                        object = known
                        if object.snapshot == nil { fill(object, from: stored) }
                        if object.isDeleted { return }
                    } else {
                        if classEntity != id.entityName {
                            classEntity = id.entityName
                            classType = objectClass(id.entityName)
                        }
                        object = make(id, as: classType)
                        fill(object, from: stored, isOfObjectEntity: true)
                        madeIDs.append(id)
                        made.append(object)
                    }
                    objects.append(object)
                }
            }
            registered.reserveCapacity(registered.count + made.count)
            // By index over two arrays: iterating over pairs went through the generic iterator, copying each
            // (a tenth of the fetch, measured).
            for index in made.indices { registered[madeIDs[index]] = made[index] }
            // The same type: the array as it is, not checked element by element.
            if Result.self == ManagedObject.self { return unsafeBitCast(objects, to: [Result].self) }
            result = objects.compactMap { $0 as? Result }
        } catch let error as CoreDataError {
            throw error
        } catch {
            throw .store("\(error)")
        }
        return result
    }

    /// The identities of the objects `request` selects, without loading them (`managedObjectIDResultType`).
    public func fetchObjectIDs<Result: ManagedObject>(
        _ request: FetchRequest<Result>
    ) throws(CoreDataError)
        -> [ManagedObjectID]
    {
        var query = try self.query(request)
        let pending = try pendingSelection(request)
        query.pending = pending?.rows
        do {
            return try store.objectIDs(query).compactMap { id in
                if let object = pending?.inserted[id.pk] { return object.objectID }
                let identity = identity(id)
                return registered[identity]?.isDeleted == true ? nil : identity
            }
        } catch {
            throw .store("\(error)")
        }
    }

    /// How many objects `request` selects, counted by SQLite (`count(for:)`): as many as ``fetch(_:)``
    /// returns, so objects deleted in the context and not saved yet are not counted, and (with
    /// ``FetchRequest/includesPendingChanges``) inserted ones are.
    public func count<Result: ManagedObject>(for request: FetchRequest<Result>) throws(CoreDataError) -> Int {
        var query = try self.query(request)
        if let pending = try pendingSelection(request) {
            query.pending = pending.rows
        } else if !deletedObjects.isEmpty {
            // Pending deletes are left out by identity; without any, SQLite counts alone.
            return try fetchObjectIDs(request).count
        }
        do {
            return try store.count(query)
        } catch {
            throw .store("\(error)")
        }
    }

    /// The SQL query of a request: predicate, sort, window.
    func query<Result: ManagedObject>(_ request: FetchRequest<Result>) throws(CoreDataError) -> ObjectQuery {
        guard let entity = model.entity(named: request.entityName) else {
            throw .unknownEntity(request.entityName)
        }
        var translator = PredicateSQL(
            model: model,
            schema: schema,
            entity: entity.name,
            storeIdentifier: storeIdentifier
        )
        let scope = PredicateSQL.Scope()
        let condition = try request.predicate.map { predicate throws(CoreDataError) in
            try translator.condition(predicate.node, entity: entity, alias: "t0", scope: scope)
        }
        var orderBy: [String] = []
        for sort in request.sortDescriptors {
            let path = sort.key.split(separator: ".").map(String.init)
            let term: String
            switch try translator.resolve(path, entity: entity, alias: "t0", scope: scope) {
            case .attribute(let fragment, _), .toOne(let fragment, _), .count(let fragment), .object(let fragment, _):
                term = sort.caseInsensitive ? "coexist_fold(\(fragment.sql), 1)" : fragment.sql
            case .toMany:
                throw .unsupportedPredicate(entity: entity.name, reason: "cannot sort by the to-many \(sort.key)")
            }
            orderBy.append(term + (sort.ascending ? " ASC" : " DESC"))
        }
        return ObjectQuery(
            entity: entity.name,
            includesSubentities: request.includesSubentities,
            joins: scope.joins,
            condition: condition?.sql,
            arguments: condition?.arguments ?? [],
            orderBy: orderBy,
            limit: request.fetchLimit > 0 ? request.fetchLimit : nil,
            offset: max(0, request.fetchOffset)
        )
    }
}

/// Loads the faults of one batched fetch a batch at a time: the first use of any of them reads its batch
/// with one query.
final class BatchLoader {
    let ids: [ManagedObjectID]
    let size: Int
    var positions: [ObjectIdentifier: Int] = [:]

    init(ids: [ManagedObjectID], size: Int) {
        self.ids = ids
        self.size = size
    }

    func load(containing object: ManagedObject, in context: ManagedObjectContext) throws(CoreDataError) {
        guard let position = positions[ObjectIdentifier(object)] else { return }
        let start = position - position % size
        let window = ids[start..<min(ids.count, start + size)]
        var byEntity: [String: [Int64]] = [:]
        for id in window { if let pk = id.pk { byEntity[id.entityName, default: []].append(pk) } }
        do {
            for (entity, keys) in byEntity {
                // At most 500 keys per statement: far below SQLite's limit on bound parameters.
                for start in stride(from: 0, to: keys.count, by: 500) {
                    let chunk = keys[start..<min(keys.count, start + 500)]
                    let query = ObjectQuery(
                        entity: entity,
                        includesSubentities: false,
                        condition: "t0.Z_PK IN (\(chunk.map { _ in "?" }.joined(separator: ", ")))",
                        arguments: chunk.map { .integer($0) }
                    )
                    try context.store.forEachBlockObject(query) { stored in
                        let member = context.object(with: context.identity(stored.id))
                        if member.snapshot == nil { context.fill(member, from: stored) }
                        self.positions[ObjectIdentifier(member)] = nil
                    }
                }
            }
        } catch {
            throw .store("\(error)")
        }
    }
}
