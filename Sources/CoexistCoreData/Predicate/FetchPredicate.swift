/// A filter for a fetch request, written as Core Data apps write `NSPredicate`s:
///
/// ```swift
/// let overdue = try FetchPredicate(format: "category.name ==[c] %@ AND dueDate < %@", "Errands", Date())
/// let tagged = try FetchPredicate(format: "ANY tags.name IN %@ AND tags.@count > 1", ["home", "work"])
/// let byKey = try FetchPredicate(format: "%K BEGINSWITH[cd] %@", "title", "buy")
/// ```
///
/// The grammar is `NSPredicate`'s: comparisons (`==`/`=`, `!=`/`<>`, `<`, `<=`, `>`, `>=`, `BETWEEN`,
/// `IN`, `BEGINSWITH`, `ENDSWITH`, `CONTAINS`, `LIKE` with `*` and `?`, `MATCHES`), the `[c]`, `[d]` and
/// `[cd]` options, `AND`/`&&`, `OR`/`||`, `NOT`/`!`, parentheses, `TRUEPREDICATE`/`FALSEPREDICATE`, `ANY`,
/// `SOME`, `ALL` and `NONE` on to-many key paths, `@count`, `SELF`, key paths through to-ones, literals
/// (`"text"`, `'text'`, numbers, `YES`/`TRUE`, `NO`/`FALSE`, `nil`/`NULL`, `{a, b}`) and the format
/// specifiers `%@` (any ``PredicateArgument``), `%K` (a key path given as a string) and the numeric ones
/// (`%d`, `%i`, `%ld`, `%lld`, `%u`, `%f`, `%lf`, `%g`). Parsing fails with a
/// ``CoreDataError/predicate(format:position:reason:)`` naming where; substitution variables (`$NAME`) and
/// subqueries are refused there.
///
/// Fetches translate the predicate to SQL over the store's tables: it runs inside SQLite.
public struct FetchPredicate: Sendable, Hashable, CustomStringConvertible {
    let node: PredicateNode

    init(node: PredicateNode) { self.node = node }

    /// Parses `format`, taking one argument for each `%` specifier in order.
    public init(format: String, _ arguments: (any PredicateArgument)?...) throws(CoreDataError) {
        try self.init(format: format, argumentArray: arguments)
    }

    /// Parses `format` with its arguments given as an array (`NSPredicate(format:argumentArray:)`).
    public init(format: String, argumentArray: [(any PredicateArgument)?]) throws(CoreDataError) {
        var parser = PredicateParser(
            format: format,
            arguments: argumentArray.map { $0?.predicateValue ?? .null }
        )
        node = try parser.parse()
    }

    /// A predicate that every object matches (`TRUEPREDICATE`) or none (`FALSEPREDICATE`).
    public init(value: Bool) { node = .constant(value) }

    /// Every one of `predicates` (`NSCompoundPredicate(andPredicateWithSubpredicates:)`).
    public static func and(_ predicates: [FetchPredicate]) -> FetchPredicate {
        FetchPredicate(node: .and(predicates.map(\.node)))
    }

    /// Any of `predicates` (`NSCompoundPredicate(orPredicateWithSubpredicates:)`).
    public static func or(_ predicates: [FetchPredicate]) -> FetchPredicate {
        FetchPredicate(node: .or(predicates.map(\.node)))
    }

    /// The negation of `predicate`.
    public static func not(_ predicate: FetchPredicate) -> FetchPredicate { FetchPredicate(node: .not(predicate.node)) }

    public var description: String { String(describing: node) }
}
