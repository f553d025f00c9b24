import CoexistSQLite

/// SQL functions that apply Swift's own string semantics (canonical equivalence, Character boundaries), so
/// that translated predicates select exactly what `Predicate.evaluate` would.
enum StringFunctions {
    static func register(on connection: Connection) throws {
        try connection.createFunction("coexist_equal", arity: 2) { arguments in
            text(arguments).map { .integer($0 == $1 ? 1 : 0) } ?? .null
        }
        try connection.createFunction("coexist_compare", arity: 2) { arguments in
            text(arguments).map { .integer($0 < $1 ? -1 : ($0 == $1 ? 0 : 1)) } ?? .null
        }
        try connection.createFunction("coexist_contains", arity: 2) { arguments in
            text(arguments).map { .integer(collectionContains($0, $1) ? 1 : 0) } ?? .null
        }
        try connection.createFunction("coexist_has_prefix", arity: 2) { arguments in
            text(arguments).map { .integer($0.starts(with: $1) ? 1 : 0) } ?? .null
        }
    }

    private static func text(_ arguments: [SQLiteValue]) -> (String, String)? {
        guard arguments.count == 2, case .text(let first) = arguments[0], case .text(let second) = arguments[1] else {
            return nil
        }
        return (first, second)
    }

    /// The same generic `contains` that `PredicateExpressions.CollectionContainsCollection` evaluates.
    private static func collectionContains<C: Collection>(_ base: C, _ other: C) -> Bool where C.Element: Equatable {
        base.contains(other)
    }
}
