import CoexistModel
import CoexistSQLite
import CoexistStore

/// Part of a predicate in SQL: a condition (true/false) or a value.
///
/// `exact` is false when the SQL only approximates the Swift semantics; such a condition must select a
/// superset of the matching rows (the in-memory pass then removes the extra ones).
struct SQLFragment {
    enum Kind {
        case condition
        case value(ValueType)
        /// A row reached by the predicate (the fetched one or one through to-one relationships).
        case row(RowContext)
    }

    enum ValueType { case text, number, boolean, blob, decimal, null, unknown }

    var sql: String
    var arguments: [SQLiteValue]
    var exact: Bool
    var kind: Kind

    static var alwaysTrue: SQLFragment { SQLFragment(sql: "1", arguments: [], exact: false, kind: .condition) }

    /// This fragment as a condition (a boolean value becomes `= 1`).
    var asCondition: SQLFragment? {
        switch kind {
        case .condition: return self
        case .value(.boolean):
            return SQLFragment(sql: "coalesce((\(sql)) = 1, 0)", arguments: arguments, exact: exact, kind: .condition)
        default: return nil
        }
    }

    var valueType: ValueType? {
        if case .value(let type) = kind { return type }
        return nil
    }
}

/// A row a key path can be evaluated on: its mapping, the SQL expression of its `id`, and how to reach
/// its columns (directly for the fetched row, through a subquery otherwise).
struct RowContext {
    let mapping: NewSchema.EntityMapping
    let entity: Entity
    let idExpression: String
    let isFetchedRow: Bool
    let schema: ErasedSchema

    func column(_ name: String) -> String {
        let quoted = SQLIdentifier.quoted(name)
        if isFetchedRow { return "t0.\(quoted)" }
        return "(SELECT \(quoted) FROM \(SQLIdentifier.quoted(mapping.table)) WHERE \"id\" = \(idExpression))"
    }
}

/// A predicate expression that can be written in SQL.
protocol SQLTranslatable {
    /// The SQL of this expression, or nil when it has none.
    func sql(_ translator: PredicateTranslator) -> SQLFragment?
}
