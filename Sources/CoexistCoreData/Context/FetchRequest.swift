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
/// limit and offset are SQL's. Objects deleted in the context are left out, and objects the context already
/// holds are returned as it holds them (with their unsaved changes). With ``includesPendingChanges`` (the
/// default, as in Core Data) the context's unsaved objects are matched as it holds them: an inserted one
/// that matches is returned, a changed one that no longer matches is not — by the same SQL, over the
/// stored rows and rows standing for those objects.
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
    /// Whether the context's unsaved changes take part (default true): objects inserted and not saved are
    /// returned when they match, changed ones are matched, sorted and windowed by the values the context
    /// holds. What the predicate reads through relationships of such an object is read as saved. False:
    /// only what is saved is matched (objects the context holds are still returned as it holds them).
    public var includesPendingChanges = true

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
