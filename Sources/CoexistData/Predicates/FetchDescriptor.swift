import CoexistStore
public import FoundationEssentials
public import FoundationInternationalization

/// A filter built at run time from predicates: any set of optional conditions combines with AND, OR and
/// NOT without writing each combination as its own `#Predicate`.
///
/// ```swift
/// var filters: [Filter<Task>] = []
/// if !showCompleted { filters.append(.where(#Predicate { !$0.isCompleted })) }
/// if let categoryID { filters.append(.where(#Predicate { $0.category?.id == categoryID })) }
/// let descriptor = FetchDescriptor<Task>(filter: .all(filters))
/// ```
public indirect enum Filter<Model: PersistentModel> {
    /// One predicate.
    case `where`(Predicate<Model>)
    /// Every filter holds (true when empty).
    case all([Filter])
    /// At least one filter holds (false when empty).
    case any([Filter])
    /// The filter does not hold.
    case not(Filter)

    /// Evaluates the filter on one record in memory.
    public func evaluate(_ record: Model) throws -> Bool {
        switch self {
        case .where(let predicate): return try predicate.evaluate(record)
        case .all(let filters):
            for filter in filters where try !filter.evaluate(record) { return false }
            return true
        case .any(let filters):
            for filter in filters where try filter.evaluate(record) { return true }
            return false
        case .not(let filter): return try !filter.evaluate(record)
        }
    }
}

/// What to fetch: a predicate and/or a run-time ``Filter``, sort order, limit and offset — in the spirit of
/// SwiftData's `FetchDescriptor`.
///
/// Predicates are translated to SQL where they can be (comparisons, `&&`, `||`, `!`, optional chaining
/// through to-one relationships, `contains` and `starts(with:)` on strings, nil checks); whatever cannot be
/// translated is evaluated in memory on the rows an SQL pre-filter returns, so results are always what the
/// predicate says. Sorts on numbers, dates and booleans run in SQL (with the limit and offset); any other
/// sort (strings, whose order is Foundation's, not SQLite's) runs in memory over the matching rows.
public struct FetchDescriptor<Model: PersistentModel> {
    /// A SwiftData-style predicate.
    public var predicate: Predicate<Model>?
    /// A run-time filter, combined with ``predicate`` by AND.
    public var filter: Filter<Model>?
    /// The sort order: the first descriptor first.
    public var sortBy: [SortDescriptor<Model>]
    /// At most this many results.
    public var fetchLimit: Int?
    /// Skip this many results first.
    public var fetchOffset: Int?
    /// The attributes to read (SwiftData's `propertiesToFetch`; all when empty). Records the fetch makes
    /// hold only these, the identity and every relationship; their other attributes keep what the record
    /// type's ``PersistentModel/init(backingData:)`` gave them, count as unchanged, and are saved only when
    /// the app sets them. A later fetch without this list fills them in (where the app left them alone).
    /// Ignored when the predicate or the sort runs in memory (they read any attribute).
    public var propertiesToFetch: [PartialKeyPath<Model>] = []
    /// Relationships to load with the records (SwiftData's `relationshipKeyPathsForPrefetching`). A record
    /// holds its related records in Swift properties, so every fetch loads every relationship of what it
    /// makes, with one query per relationship and level of the graph: the list is accepted and changes
    /// nothing.
    public var relationshipKeyPathsForPrefetching: [PartialKeyPath<Model>] = []

    /// Creates a descriptor.
    public init(
        predicate: Predicate<Model>? = nil,
        filter: Filter<Model>? = nil,
        sortBy: [SortDescriptor<Model>] = [],
        fetchLimit: Int? = nil,
        fetchOffset: Int? = nil
    ) {
        self.predicate = predicate
        self.filter = filter
        self.sortBy = sortBy
        self.fetchLimit = fetchLimit
        self.fetchOffset = fetchOffset
    }

    /// The predicate and the filter as one filter.
    var combined: Filter<Model>? {
        switch (predicate, filter) {
        case (nil, nil): nil
        case (let predicate?, nil): .where(predicate)
        case (nil, let filter?): filter
        case (let predicate?, let filter?): .all([.where(predicate), filter])
        }
    }
}
