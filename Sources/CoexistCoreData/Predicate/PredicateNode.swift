/// A parsed predicate: what a Core Data format string says, before it is translated to SQL.
indirect enum PredicateNode: Sendable, Hashable {
    case constant(Bool)
    case and([PredicateNode])
    case or([PredicateNode])
    case not(PredicateNode)
    case comparison(PredicateComparison)
}

/// `[ANY] left op[cd] right`.
struct PredicateComparison: Sendable, Hashable {
    enum Quantifier: Sendable, Hashable { case none, any, all, noneOf }

    enum Operator: String, Sendable, Hashable {
        case equal = "=="
        case notEqual = "!="
        case less = "<"
        case lessOrEqual = "<="
        case greater = ">"
        case greaterOrEqual = ">="
        case beginsWith = "BEGINSWITH"
        case endsWith = "ENDSWITH"
        case contains = "CONTAINS"
        case like = "LIKE"
        case matches = "MATCHES"
        case inCollection = "IN"
        case between = "BETWEEN"
    }

    var quantifier: Quantifier
    var left: PredicateOperand
    var op: Operator
    var caseInsensitive: Bool
    var diacriticInsensitive: Bool
    var right: PredicateOperand
}

/// One side of a comparison.
indirect enum PredicateOperand: Sendable, Hashable {
    /// `category.name`, `tasks.@count`, `SELF` (an empty path).
    case keyPath([String])
    case value(PredicateValue)
    /// `{1, 2, 3}`.
    case aggregate([PredicateOperand])
}
