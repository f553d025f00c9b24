/// What to fetch (`NSFetchRequest`): an entity, a predicate, an order, a window, a batch size.
///
/// ```swift
/// let request = FetchRequest<Task>(entityName: "Task")
/// request.predicate = try FetchPredicate(format: "isCompleted == NO AND category.name == %@", "Errands")
/// request.sortDescriptors = [FetchSortDescriptor(key: "priority", ascending: false)]
/// request.fetchLimit = 20
/// let tasks = try context.fetch(request)
/// ```
///
/// Everything runs in SQLite: the predicate and sort are translated to SQL over the store's tables, the
/// limit and offset are SQL's. Fetches read what is saved; objects deleted in the context are left out,
/// and objects the context already holds are returned as it holds them (with their unsaved changes).
public final class FetchRequest<Result: ManagedObject> {
    /// The entity whose objects are fetched.
    public var entityName: String
    /// Which objects; nil for all.
    public var predicate: FetchPredicate?
    /// The order; objects in the same place keep the store's key order.
    public var sortDescriptors: [FetchSortDescriptor] = []
    /// At most this many objects; 0 for no limit.
    public var fetchLimit = 0
    /// Objects skipped first.
    public var fetchOffset = 0
    /// Greater than 0: the fetch reads only identities, and objects load their values this many at a time,
    /// when one of them is first used (memory stays proportional to the batch, not the result).
    public var fetchBatchSize = 0
    /// Whether objects of sub-entities are included (default true).
    public var includesSubentities = true

    /// A request for objects of `entityName`.
    public init(entityName: String) { self.entityName = entityName }
}

/// One sort key of a fetch (`NSSortDescriptor(key:ascending:)`): an attribute, or a key path through
/// to-ones (`category.name`).
public struct FetchSortDescriptor: Sendable, Hashable {
    /// The key path.
    public var key: String
    /// Ascending (nil first) or descending.
    public var ascending: Bool
    /// Compare strings without case (`caseInsensitiveCompare:`).
    public var caseInsensitive: Bool

    /// A sort on `key`.
    public init(key: String, ascending: Bool = true, caseInsensitive: Bool = false) {
        self.key = key
        self.ascending = ascending
        self.caseInsensitive = caseInsensitive
    }
}
