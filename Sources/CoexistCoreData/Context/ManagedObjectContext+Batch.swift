import CoexistHistory
import CoexistLegacyStore
import CoexistModel

/// Batch requests: one save each, written as Core Data writes them (persistent history with the context's
/// author, `Z_OPT` bumped, delete rules), bypassing the context's objects. Like Core Data's, they do not
/// change objects the context holds: its next ``mergeChangesFromStore()`` (or `remoteChanges`) brings them
/// up to date, as the batch's token is not the context's own save.
extension ManagedObjectContext {
    /// Inserts every object of `request` in one save; nothing is written when one of them is refused (an
    /// unknown key, a value of the wrong type, a missing mandatory value, a uniqueness clash), and the error
    /// names it by its position in `objects`.
    @discardableResult
    public func execute(_ request: BatchInsertRequest) throws(CoreDataError) -> BatchResult {
        guard let entity = model.entity(named: request.entityName) else { throw .unknownEntity(request.entityName) }
        var rows: [[String: AttributeValue]] = []
        for (index, object) in request.objects.enumerated() {
            rows.append(try attributeValues(object, of: entity, naming: "\(request.entityName)[\(index)]"))
        }
        return try batchSave { save in
            var written: [ObjectID] = []
            for (index, values) in rows.enumerated() {
                do {
                    written.append(try save.insert(entity.name, values))
                } catch let error as LegacyStoreError {
                    throw Self.named(error, "\(request.entityName)[\(index)]")
                }
            }
            return written
        }
    }

    /// Sets `propertiesToUpdate` on every object the request's predicate selects, in one save.
    @discardableResult
    public func execute(_ request: BatchUpdateRequest) throws(CoreDataError) -> BatchResult {
        guard let entity = model.entity(named: request.entityName) else { throw .unknownEntity(request.entityName) }
        let values = try attributeValues(request.propertiesToUpdate, of: entity, naming: request.entityName)
        let query = try selection(request.entityName, request.predicate, request.includesSubentities)
        return try batchSave { save in
            // Selected inside the write transaction: what matches is what is updated.
            let ids = try store.objectIDs(query)
            for id in ids {
                do {
                    try save.update(id, values)
                } catch let error as LegacyStoreError {
                    throw Self.named(error, "\(id)")
                }
            }
            return ids
        }
    }

    /// Deletes every object the request's predicate selects, in one save, with the model's delete rules.
    @discardableResult
    public func execute(_ request: BatchDeleteRequest) throws(CoreDataError) -> BatchResult {
        guard model.entity(named: request.entityName) != nil else { throw .unknownEntity(request.entityName) }
        let query = try selection(request.entityName, request.predicate, request.includesSubentities)
        return try batchSave { save in
            let ids = try store.objectIDs(query)
            var written: [ObjectID] = []
            // An earlier delete's cascade may have taken a later one already.
            for id in ids where try store.object(id) != nil {
                do {
                    try save.delete(id)
                } catch let error as LegacyStoreError {
                    throw Self.named(error, "\(id)")
                }
                written.append(id)
            }
            return written
        }
    }

    /// The attribute values `object` gives, checked against `entity` as `setValue(_:forKey:)` checks them.
    private func attributeValues(
        _ object: [String: Any],
        of entity: Entity,
        naming name: String
    ) throws(CoreDataError) -> [String: AttributeValue] {
        var values: [String: AttributeValue] = [:]
        for (key, value) in object {
            guard let attribute = attribute(entity.name, key) else {
                if relationship(entity.name, key) != nil {
                    throw .validation(object: name, key: key, reason: "a batch request sets attributes only")
                }
                throw .unknownKey(entity: entity.name, key: key)
            }
            guard !attribute.isDerived, !attribute.isTransient else {
                throw .validation(object: name, key: key, reason: "derived or transient: not stored by a batch")
            }
            guard let stored = ValueBridge.stored(Self.unwrapped(value), attribute) else {
                throw .validation(
                    object: name,
                    key: key,
                    reason: "\(type(of: value)) is not a value of a \(attribute.type.xmlName) attribute"
                )
            }
            values[key] = stored
        }
        return values
    }

    /// The query selecting what `predicate` selects from `entityName`.
    private func selection(
        _ entityName: String,
        _ predicate: FetchPredicate?,
        _ includesSubentities: Bool
    ) throws(CoreDataError) -> ObjectQuery {
        let request = FetchRequest<ManagedObject>(entityName: entityName)
        request.predicate = predicate
        request.includesSubentities = includesSubentities
        return try query(request)
    }

    /// One save of a batch, with the context's author; its token is not the context's own, so merging
    /// brings its changes to held objects.
    private func batchSave(_ body: (LegacySave) throws -> [ObjectID]) throws(CoreDataError) -> BatchResult {
        guard !isReadOnly else { throw .readOnly(path: path) }
        var written: [ObjectID] = []
        do {
            let result = try store.save(
                SaveMetadata(author: transactionAuthor, contextName: name, processName: processName)
            ) { save in written = try body(save) }
            return BatchResult(objectIDs: written.map(identity), token: result.token)
        } catch let error as CoreDataError {
            throw error
        } catch {
            throw .store("\(error)")
        }
    }

    /// `value` without the optional a dictionary of `Any` may wrap it in: nil for a nil optional (as
    /// `setValue(nil, forKey:)`).
    private static func unwrapped(_ value: Any) -> Any? {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return value }
        return mirror.children.first.map { unwrapped($0.value) } ?? nil
    }

    private static func named(_ error: LegacyStoreError, _ object: String) -> any Error {
        if case .validation(_, let detail) = error {
            return CoreDataError.validation(object: object, key: "", reason: detail)
        }
        return error
    }
}
