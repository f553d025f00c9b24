import CoexistModel
import CoexistSQLite
import CoexistStore
import FoundationEssentials
import FoundationInternationalization

/// Translates predicates and filters over records into SQL conditions on the new schema.
///
/// Every result is either exact (SQL selects exactly the matching rows) or a superset (`exact == false`),
/// in which case the caller evaluates the predicate in memory on the rows SQL returns.
final class PredicateTranslator {
    let store: NewStore
    let identities: (AnyObject) -> String?
    var variables: [PredicateExpressions.VariableID: RowContext] = [:]

    init(store: NewStore, identities: @escaping (AnyObject) -> String?) {
        self.store = store
        self.identities = identities
    }

    /// The context of the fetched row for a record type.
    func fetchedRow(_ schema: ErasedSchema) -> RowContext? {
        guard let mapping = store.schema.entities[schema.entity], let entity = store.model.entity(named: schema.entity)
        else {
            return nil
        }
        return RowContext(
            mapping: mapping,
            entity: entity,
            idExpression: "t0.\"id\"",
            isFetchedRow: true,
            schema: schema
        )
    }

    /// The condition of a whole filter; untranslatable parts become an inexact `1`.
    func condition<Model: PersistentModel>(_ filter: Filter<Model>) -> SQLFragment {
        switch filter {
        case .where(let predicate):
            guard let row = fetchedRow(Model.erasedSchema) else { return .alwaysTrue }
            variables[predicate.variable.key] = row
            return fragment(predicate.expression)?.asCondition ?? .alwaysTrue
        case .all(let filters):
            return conjunction(filters.map { condition($0) })
        case .any(let filters):
            return disjunction(filters.map { condition($0) })
        case .not(let inner):
            return negation(condition(inner))
        }
    }

    func fragment(_ expression: Any) -> SQLFragment? {
        (expression as? any SQLTranslatable)?.sql(self)
    }

    func conjunction(_ parts: [SQLFragment]) -> SQLFragment {
        let useful = parts.filter { $0.sql != "1" || $0.exact }
        guard !useful.isEmpty else {
            return parts.isEmpty ? SQLFragment(sql: "1", arguments: [], exact: true, kind: .condition) : .alwaysTrue
        }
        return SQLFragment(
            sql: useful.map { "(\($0.sql))" }.joined(separator: " AND "),
            arguments: useful.flatMap(\.arguments),
            exact: parts.allSatisfy(\.exact),
            kind: .condition
        )
    }

    func disjunction(_ parts: [SQLFragment]) -> SQLFragment {
        guard !parts.isEmpty else { return SQLFragment(sql: "0", arguments: [], exact: true, kind: .condition) }
        if parts.contains(where: { $0.sql == "1" && !$0.exact }) { return .alwaysTrue }
        return SQLFragment(
            sql: parts.map { "(\($0.sql))" }.joined(separator: " OR "),
            arguments: parts.flatMap(\.arguments),
            exact: parts.allSatisfy(\.exact),
            kind: .condition
        )
    }

    func negation(_ part: SQLFragment) -> SQLFragment {
        guard part.exact else { return .alwaysTrue }  // NOT of a superset is not a superset
        return SQLFragment(sql: "NOT (\(part.sql))", arguments: part.arguments, exact: true, kind: .condition)
    }

    /// A literal: its SQL value in the new schema's encodings, or nil when it has none.
    func literal(_ value: Any) -> SQLFragment? {
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional {
            guard let wrapped = mirror.children.first?.value else {
                return SQLFragment(sql: "NULL", arguments: [], exact: true, kind: .value(.null))
            }
            return literal(wrapped)
        }
        if let object = value as? any PersistentModel {
            guard let id = identities(object) else { return nil }
            return SQLFragment(sql: "?", arguments: [.text(id)], exact: true, kind: .value(.text))
        }
        guard let convertible = value as? any AttributeConvertible else { return nil }
        switch convertible.attributeValue {
        case .null: return SQLFragment(sql: "NULL", arguments: [], exact: true, kind: .value(.null))
        case .integer(let number):
            return SQLFragment(sql: "?", arguments: [.integer(number)], exact: true, kind: .value(.number))
        case .boolean(let flag):
            return SQLFragment(sql: "?", arguments: [.integer(flag ? 1 : 0)], exact: true, kind: .value(.boolean))
        case .double(let number), .date(let number):
            guard !number.isNaN else { return nil }
            return SQLFragment(sql: "?", arguments: [.real(number)], exact: true, kind: .value(.number))
        case .string(let text), .uri(let text):
            return SQLFragment(sql: "?", arguments: [.text(text)], exact: true, kind: .value(.text))
        case .uuid(let bytes):
            guard let text = UUIDText.text(bytes) else { return nil }
            return SQLFragment(sql: "?", arguments: [.text(text)], exact: true, kind: .value(.text))
        case .decimal(let text):
            return SQLFragment(sql: "?", arguments: [.text(text)], exact: true, kind: .value(.decimal))
        case .binary(let bytes), .transformable(let bytes), .externalReference(let bytes):
            return SQLFragment(sql: "?", arguments: [.blob(bytes)], exact: true, kind: .value(.blob))
        }
    }

    /// The value of property `name` on a row.
    func property(_ name: String, of row: RowContext) -> SQLFragment? {
        switch row.mapping.properties[name] {
        case .column(let column, let encoding):
            return SQLFragment(
                sql: row.column(column),
                arguments: [],
                exact: true,
                kind: .value(Self.type(of: encoding))
            )
        case .identity:
            return SQLFragment(sql: row.idExpression, arguments: [], exact: true, kind: .value(.text))
        case .toOne(let column, _):
            guard let destinationType = row.schema.relationship(name)?.destination,
                let relationship = store.model.allRelationships(of: row.entity).first(where: { $0.name == name }),
                let destination = store.model.entity(named: relationship.destination),
                let mapping = store.schema.entities[destination.name]
            else { return nil }
            let context = RowContext(
                mapping: mapping,
                entity: destination,
                idExpression: row.column(column),
                isFetchedRow: false,
                schema: destinationType.erasedSchema
            )
            return SQLFragment(sql: context.idExpression, arguments: [], exact: true, kind: .row(context))
        default:
            return nil
        }
    }

    static func type(of encoding: ValueEncoding) -> SQLFragment.ValueType {
        switch encoding {
        case .integer16, .integer32, .integer64, .real, .dateReal: .number
        case .boolean: .boolean
        case .decimalText: .decimal
        case .text, .uuidText: .text
        case .blob: .blob
        }
    }
}
