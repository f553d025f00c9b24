import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import Foundation

/// Translates a parsed predicate into SQL over a Core Data store's tables (coredata-sqlite-format.md §1):
/// attributes are columns of the root table aliased `t0`, key paths through to-ones are `LEFT JOIN`s, a
/// to-many (`ANY`, `ALL`, `NONE`, `@count`, `IN`, `CONTAINS`) is a correlated subquery on its foreign key,
/// join table or hidden foreign key. Every identifier comes from the store's schema and is quoted; every
/// value is bound, encoded as the compared attribute is stored.
struct PredicateSQL {
    /// A piece of SQL and the values its `?` placeholders take, in order.
    struct Fragment {
        var sql: String
        var arguments: [SQLiteValue] = []
    }

    /// Where joins of one scope (the query, or one subquery) are collected.
    final class Scope {
        var joins: [String] = []
        var aliases: [String: String] = [:]
    }

    /// Where a key path is resolved: an entity, the alias of its row, and the scope that takes its joins.
    struct Place {
        var entity: Entity
        var alias: String
        var scope: Scope
    }

    /// What a key path denotes.
    enum Resolved {
        case attribute(Fragment, Attribute)
        /// A to-one: its foreign key column; `number` restricts the destination entity when it shares a table.
        case toOne(Fragment, destination: Entity)
        /// The object itself (`SELF`, or the end of a to-one path that was joined).
        case object(Fragment, entity: Entity)
        case toMany(Relationship, owner: Entity, ownerAlias: String, rest: [String])
        case count(Fragment)
    }

    let model: Model
    let schema: StoreSchema
    let entityName: String
    /// The store's `Z_UUID`: an object argument of another store matches nothing.
    let storeIdentifier: String
    var aliasCount = 0
    /// How deeply the translation has recursed into the predicate.
    var depth = 0

    init(model: Model, schema: StoreSchema, entity: String, storeIdentifier: String) {
        self.model = model
        self.schema = schema
        entityName = entity
        self.storeIdentifier = storeIdentifier
    }

    func failure(_ reason: String) -> CoreDataError { .unsupportedPredicate(entity: entityName, reason: reason) }

    // MARK: Predicates

    mutating func condition(
        _ node: PredicateNode,
        entity: Entity,
        alias: String,
        scope: Scope
    )
        throws(CoreDataError) -> Fragment
    {
        // Parsed predicates are bounded; ones combined in code (`and`, `or`, `not`) are bounded here.
        depth += 1
        defer { depth -= 1 }
        guard depth <= PredicateParser.maximumDepth else {
            throw failure("the predicate nests more than \(PredicateParser.maximumDepth) levels deep")
        }
        switch node {
        case .constant(let value): return Fragment(sql: value ? "1" : "0")
        case .not(let inner):
            let fragment = try condition(inner, entity: entity, alias: alias, scope: scope)
            return Fragment(sql: "NOT coalesce((\(fragment.sql)), 0)", arguments: fragment.arguments)
        case .and(let terms), .or(let terms):
            guard !terms.isEmpty else { return Fragment(sql: { if case .and = node { "1" } else { "0" } }()) }
            var parts: [Fragment] = []
            for term in terms { parts.append(try condition(term, entity: entity, alias: alias, scope: scope)) }
            let glue = { if case .and = node { " AND " } else { " OR " } }()
            return Fragment(
                sql: parts.map { "(\($0.sql))" }.joined(separator: glue),
                arguments: parts.flatMap(\.arguments)
            )
        case .comparison(let comparison):
            let place = Place(entity: entity, alias: alias, scope: scope)
            return try self.comparison(comparison, at: place, rightAt: place)
        }
    }

    /// One comparison: its left key path resolved at `place`, a key path on its right at `rightPlace` (the
    /// fetched object's, also inside the subquery of an `ANY`: NSPredicate evaluates every key path on
    /// the object the predicate is evaluated with).
    private mutating func comparison(
        _ comparison: PredicateComparison,
        at place: Place,
        rightAt rightPlace: Place,
        inSubquery: Bool = false
    ) throws(CoreDataError) -> Fragment {
        var comparison = comparison
        // `value op keyPath`: membership (`%@ IN tags`) or a flipped comparison.
        if case .value = comparison.left, case .keyPath = comparison.right {
            switch comparison.op {
            case .inCollection: comparison.op = .contains
            case .less: comparison.op = .greater
            case .greater: comparison.op = .less
            case .lessOrEqual: comparison.op = .greaterOrEqual
            case .greaterOrEqual: comparison.op = .lessOrEqual
            case .equal, .notEqual: break
            default: throw failure("a value on the left of \(comparison.op.rawValue)")
            }
            swap(&comparison.left, &comparison.right)
        }
        guard case .keyPath(let path) = comparison.left else {
            throw failure("a comparison needs a key path on one side")
        }
        let resolved = try resolve(path, entity: place.entity, alias: place.alias, scope: place.scope)
        if case .toMany(let relationship, let owner, let ownerAlias, let rest) = resolved {
            return try toMany(
                comparison,
                relationship,
                owner: owner,
                ownerAlias: ownerAlias,
                rest: rest,
                rightAt: rightPlace,
                membership: !inSubquery && comparison.quantifier == .none && comparison.op == .contains
            )
        }
        guard comparison.quantifier == .none else {
            throw failure("\(path.joined(separator: ".")) is not a to-many: ANY, ALL and NONE need one")
        }
        return try scalar(comparison, resolved, rightAt: rightPlace)
    }

    /// `ANY/ALL/NONE rel.rest op value`, `rel CONTAINS obj`, `obj IN rel`, `value IN rel.rest`: a subquery
    /// over the destination. With `membership` (a top-level `CONTAINS`, or `IN` with the collection on its
    /// right, without a quantifier) the comparison asks whether the collection holds the value, so each
    /// element is compared with `==`; otherwise each element is tested with the operator itself
    /// (`ANY tags.name CONTAINS 'x'` is a substring test per name).
    private mutating func toMany(
        _ comparison: PredicateComparison,
        _ relationship: Relationship,
        owner: Entity,
        ownerAlias: String,
        rest: [String],
        rightAt rightPlace: Place,
        membership: Bool
    ) throws(CoreDataError) -> Fragment {
        guard let destination = model.entity(named: relationship.destination) else {
            throw failure("\(relationship.name): destination \(relationship.destination) is not in the model")
        }
        aliasCount += 1
        let alias = "s\(aliasCount)"
        let inner = Scope()
        var element = comparison
        element.quantifier = .none
        element.left = .keyPath(rest)
        // Membership is the whole comparison's meaning, decided once: a to-many further down the path
        // (`ANY a.b.name CONTAINS 'x'`) keeps the operator for its elements.
        if membership { element.op = .equal }
        let test = try self.comparison(
            element,
            at: Place(entity: destination, alias: alias, scope: inner),
            rightAt: rightPlace,
            inSubquery: true
        )
        let source = try subquerySource(relationship, owner: owner, ownerAlias: ownerAlias, alias: alias)
        let joins = inner.joins.map { " " + $0 }.joined()
        let select = "SELECT 1 FROM \(source.sql)\(joins) WHERE \(source.link)"
        switch comparison.quantifier {
        case .none, .any:
            return Fragment(sql: "EXISTS (\(select) AND (\(test.sql)))", arguments: test.arguments)
        case .noneOf:
            return Fragment(sql: "NOT EXISTS (\(select) AND (\(test.sql)))", arguments: test.arguments)
        case .all:
            return Fragment(
                sql: "NOT EXISTS (\(select) AND NOT coalesce((\(test.sql)), 0))",
                arguments: test.arguments
            )
        }
    }

    /// The FROM clause of a subquery over the objects `relationship` of the row `ownerAlias` holds, and the
    /// condition linking them.
    func subquerySource(
        _ relationship: Relationship,
        owner: Entity,
        ownerAlias: String,
        alias: String
    ) throws(CoreDataError) -> (sql: String, link: String) {
        guard let storage = schema.entities[owner.name]?.properties[relationship.name],
            let destination = schema.entities[relationship.destination]
        else {
            throw failure("\(owner.name).\(relationship.name) is not stored")
        }
        let table = SQLIdentifier.quoted(destination.table)
        let restriction = entityRestriction(relationship.destination, alias: alias)
        switch storage {
        case .inverseForeignKey(let inverse):
            guard case .toOne(let column, _, _)? = destination.properties[inverse] else {
                throw failure("\(owner.name).\(relationship.name): the inverse \(inverse) is not stored")
            }
            return ("\(table) \(alias)", "\(alias).\(SQLIdentifier.quoted(column)) = \(ownerAlias).Z_PK\(restriction)")
        case .hiddenForeignKey(let hiddenTable, let column):
            return (
                "\(SQLIdentifier.quoted(hiddenTable)) \(alias)",
                "\(alias).\(SQLIdentifier.quoted(column)) = \(ownerAlias).Z_PK\(restriction)"
            )
        case .joinTable(let joinTable, let sourceColumn, let destinationColumn, _):
            let join = SQLIdentifier.quoted(joinTable)
            let source = SQLIdentifier.quoted(sourceColumn)
            if destinationColumn == "REFLEXIVE" {
                return (
                    "\(table) \(alias)",
                    "\(alias).Z_PK IN (SELECT REFLEXIVE FROM \(join) WHERE \(source) = \(ownerAlias).Z_PK "
                        + "UNION SELECT \(source) FROM \(join) WHERE REFLEXIVE = \(ownerAlias).Z_PK)\(restriction)"
                )
            }
            return (
                "\(join) j\(alias) JOIN \(table) \(alias) ON \(alias).Z_PK = j\(alias).\(SQLIdentifier.quoted(destinationColumn))",
                "j\(alias).\(source) = \(ownerAlias).Z_PK\(restriction)"
            )
        case .toOne, .attribute, .unresolved:
            throw failure("\(owner.name).\(relationship.name) is not a stored to-many")
        }
    }

    /// ` AND alias.Z_ENT IN (…)` when `entity` shares its table with entities outside its hierarchy.
    func entityRestriction(_ entity: String, alias: String) -> String {
        guard let described = model.entity(named: entity), described.superentity != nil else { return "" }
        let numbers = model.hierarchy(from: described).compactMap { schema.entities[$0.name]?.number }
        return " AND \(alias).Z_ENT IN (\(numbers.map(String.init).joined(separator: ", ")))"
    }
}
