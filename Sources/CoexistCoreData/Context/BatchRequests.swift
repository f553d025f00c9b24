/// Inserts many objects of one entity in one save, without managed objects (`NSBatchInsertRequest`):
/// attribute values by name, as `setValue(_:forKey:)` takes them; relationships are not set, as in Core Data.
///
/// ```swift
/// let result = try context.execute(BatchInsertRequest(entityName: "Task", objects: rows))
/// ```
public struct BatchInsertRequest {
    /// The entity of every object.
    public var entityName: String
    /// Each object's attribute values by name; attributes left out take the model's default.
    public var objects: [[String: Any]]

    /// A request inserting `objects` into `entityName`.
    public init(entityName: String, objects: [[String: Any]]) {
        self.entityName = entityName
        self.objects = objects
    }
}

/// Sets attributes of every object a predicate selects, in one save, without loading them
/// (`NSBatchUpdateRequest`).
///
/// ```swift
/// var request = BatchUpdateRequest(entityName: "Task")
/// request.predicate = try FetchPredicate(format: "dueDate < %@", Date())
/// request.propertiesToUpdate = ["isCompleted": true]
/// try context.execute(request)
/// ```
public struct BatchUpdateRequest {
    /// The entity whose objects are updated.
    public var entityName: String
    /// Which objects; nil for all.
    public var predicate: FetchPredicate?
    /// Whether objects of sub-entities are updated too (default true).
    public var includesSubentities = true
    /// The attribute values to set, by name.
    public var propertiesToUpdate: [String: Any] = [:]

    /// A request updating objects of `entityName`.
    public init(entityName: String) { self.entityName = entityName }
}

/// Deletes every object a predicate selects, in one save, without loading them (`NSBatchDeleteRequest`).
/// The model's delete rules apply (cascade, nullify; a deny refuses the whole request).
public struct BatchDeleteRequest {
    /// The entity whose objects are deleted.
    public var entityName: String
    /// Which objects; nil for all.
    public var predicate: FetchPredicate?
    /// Whether objects of sub-entities are deleted too (default true).
    public var includesSubentities = true

    /// A request deleting the objects of `entityName` that `predicate` selects.
    public init(entityName: String, predicate: FetchPredicate? = nil) {
        self.entityName = entityName
        self.predicate = predicate
    }
}

/// What a batch request did (`NSBatchInsertResult`, `NSBatchUpdateResult`, `NSBatchDeleteResult`).
public struct BatchResult: Sendable, Hashable {
    /// The objects inserted, updated or deleted (cascades not included), in the order they were written.
    public var objectIDs: [ManagedObjectID]
    /// The history token of the save; nil when there was nothing to do.
    public var token: Int64?

    /// How many objects the request wrote.
    public var count: Int { objectIDs.count }
}
