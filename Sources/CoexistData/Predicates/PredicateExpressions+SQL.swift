import CoexistSQLite
import CoexistStore
import FoundationEssentials
import FoundationInternationalization

// How each Foundation predicate expression reads in SQL. Anything without a conformance (or whose parts
// cannot be translated) stays in memory.

extension PredicateExpressions.Variable: SQLTranslatable {
    func sql(_ translator: PredicateTranslator) -> SQLFragment? {
        guard let row = translator.variables[key] else { return nil }
        return SQLFragment(sql: row.idExpression, arguments: [], exact: true, kind: .row(row))
    }
}

extension PredicateExpressions.KeyPath: SQLTranslatable {
    func sql(_ translator: PredicateTranslator) -> SQLFragment? {
        guard case .row(let row)? = translator.fragment(root)?.kind, let name = row.schema.keyPaths[keyPath] else {
            return nil
        }
        return translator.property(name, of: row)
    }
}

extension PredicateExpressions.Value: SQLTranslatable {
    func sql(_ translator: PredicateTranslator) -> SQLFragment? { translator.literal(value) }
}

extension PredicateExpressions.NilLiteral: SQLTranslatable {
    func sql(_ translator: PredicateTranslator) -> SQLFragment? {
        SQLFragment(sql: "NULL", arguments: [], exact: true, kind: .value(.null))
    }
}

extension PredicateExpressions.OptionalFlatMap: SQLTranslatable {
    func sql(_ translator: PredicateTranslator) -> SQLFragment? {
        guard case .row(let row)? = translator.fragment(wrapped)?.kind else { return nil }
        translator.variables[variable.key] = row
        return translator.fragment(transform)
    }
}

extension PredicateExpressions.Conjunction: SQLTranslatable {
    func sql(_ translator: PredicateTranslator) -> SQLFragment? {
        translator.conjunction([
            translator.fragment(lhs)?.asCondition ?? .alwaysTrue, translator.fragment(rhs)?.asCondition ?? .alwaysTrue,
        ])
    }
}

extension PredicateExpressions.Disjunction: SQLTranslatable {
    func sql(_ translator: PredicateTranslator) -> SQLFragment? {
        translator.disjunction([
            translator.fragment(lhs)?.asCondition ?? .alwaysTrue, translator.fragment(rhs)?.asCondition ?? .alwaysTrue,
        ])
    }
}

extension PredicateExpressions.Negation: SQLTranslatable {
    func sql(_ translator: PredicateTranslator) -> SQLFragment? {
        translator.negation(translator.fragment(wrapped)?.asCondition ?? .alwaysTrue)
    }
}

extension PredicateExpressions.Equal: SQLTranslatable {
    func sql(_ translator: PredicateTranslator) -> SQLFragment? {
        equality(translator.fragment(lhs), translator.fragment(rhs))
    }
}

extension PredicateExpressions.NotEqual: SQLTranslatable {
    func sql(_ translator: PredicateTranslator) -> SQLFragment? {
        equality(translator.fragment(lhs), translator.fragment(rhs)).map(translator.negation)
    }
}

/// `lhs IS rhs`, null-safe as Swift's `==` on optionals. Text equal in Swift may differ in bytes
/// (canonical equivalence): non-ASCII text is compared by `coexist_equal`, which uses Swift's `==`.
func equality(_ lhs: SQLFragment?, _ rhs: SQLFragment?) -> SQLFragment? {
    guard let lhs, let rhs, lhs.exact, rhs.exact else { return nil }
    let types = [lhs.valueType, rhs.valueType]
    if types.contains(where: { $0 == .decimal || $0 == nil && !isRow(lhs) && !isRow(rhs) }) { return nil }
    let arguments = lhs.arguments + rhs.arguments
    let asciiOnly = arguments.allSatisfy { value in value.textValue.map { $0.utf8.allSatisfy { $0 < 0x80 } } ?? true }
    if types.contains(.text), !asciiOnly || (lhs.arguments.isEmpty && rhs.arguments.isEmpty) {
        let sql =
            "CASE WHEN (\(lhs.sql)) IS NULL OR (\(rhs.sql)) IS NULL THEN (\(lhs.sql)) IS (\(rhs.sql)) ELSE coexist_equal(\(lhs.sql), \(rhs.sql)) END"
        return SQLFragment(
            sql: sql,
            arguments: lhs.arguments + rhs.arguments + lhs.arguments + rhs.arguments + lhs.arguments + rhs.arguments,
            exact: true,
            kind: .condition
        )
    }
    return SQLFragment(sql: "(\(lhs.sql)) IS (\(rhs.sql))", arguments: arguments, exact: true, kind: .condition)
}

private func isRow(_ fragment: SQLFragment) -> Bool {
    if case .row = fragment.kind { return true }
    return false
}

extension PredicateExpressions.Comparison: SQLTranslatable {
    func sql(_ translator: PredicateTranslator) -> SQLFragment? {
        guard let left = translator.fragment(lhs), let right = translator.fragment(rhs), left.exact, right.exact,
            let leftType = left.valueType, let rightType = right.valueType
        else { return nil }
        let symbol: String
        switch op {
        case .lessThan: symbol = "<"
        case .lessThanOrEqual: symbol = "<="
        case .greaterThan: symbol = ">"
        case .greaterThanOrEqual: symbol = ">="
        }
        let arguments = left.arguments + right.arguments
        switch (leftType, rightType) {
        case (.number, .number), (.boolean, .boolean):
            return SQLFragment(
                sql: "coalesce((\(left.sql)) \(symbol) (\(right.sql)), 0)",
                arguments: arguments,
                exact: true,
                kind: .condition
            )
        case (.text, .text):
            return SQLFragment(
                sql: "coalesce(coexist_compare(\(left.sql), \(right.sql)) \(symbol) 0, 0)",
                arguments: arguments,
                exact: true,
                kind: .condition
            )
        default:
            return nil
        }
    }
}

extension PredicateExpressions.CollectionContainsCollection: SQLTranslatable {
    func sql(_ translator: PredicateTranslator) -> SQLFragment? {
        textFunction("coexist_contains", translator.fragment(base), translator.fragment(other))
    }
}

extension PredicateExpressions.SequenceStartsWith: SQLTranslatable {
    func sql(_ translator: PredicateTranslator) -> SQLFragment? {
        textFunction("coexist_has_prefix", translator.fragment(base), translator.fragment(prefix))
    }
}

/// A Swift string function applied in SQL (exact: the same Swift code runs).
private func textFunction(_ name: String, _ base: SQLFragment?, _ argument: SQLFragment?) -> SQLFragment? {
    guard let base, let argument, base.exact, argument.exact, base.valueType == .text, argument.valueType == .text
    else {
        return nil
    }
    return SQLFragment(
        sql: "coalesce(\(name)(\(base.sql), \(argument.sql)), 0)",
        arguments: base.arguments + argument.arguments,
        exact: true,
        kind: .condition
    )
}
