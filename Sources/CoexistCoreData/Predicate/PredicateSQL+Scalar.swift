import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import Foundation

extension PredicateSQL {
    // MARK: Key paths

    /// What `path` denotes from `entity` (aliased `alias`); to-ones in the middle of it join into `scope`.
    mutating func resolve(
        _ path: [String],
        entity: Entity,
        alias: String,
        scope: Scope
    ) throws(CoreDataError)
        -> Resolved
    {
        var current = entity
        var currentAlias = alias
        if path.isEmpty { return .object(Fragment(sql: "\(alias).Z_PK"), entity: entity) }
        for (offset, name) in path.enumerated() {
            let isLast = offset == path.count - 1
            let mapping = schema.entities[current.name]
            if let attribute = model.allAttributes(of: current).first(where: { $0.name == name }) {
                guard isLast else { throw failure("\(current.name).\(name) is an attribute: nothing can follow it") }
                guard !attribute.isTransient, case .attribute(let column)? = mapping?.properties[name] else {
                    throw failure("\(current.name).\(name) is not stored in the store (transient)")
                }
                return .attribute(Fragment(sql: "\(currentAlias).\(SQLIdentifier.quoted(column))"), attribute)
            }
            guard let relationship = model.allRelationships(of: current).first(where: { $0.name == name }),
                !relationship.isTransient, let destination = model.entity(named: relationship.destination)
            else {
                if name.hasPrefix("@") { throw failure("\(name) must follow a to-many relationship") }
                throw failure("\(current.name) has no property \(name)")
            }
            if relationship.isToMany {
                let rest = Array(path[(offset + 1)...])
                if rest == ["@count"] {
                    aliasCount += 1
                    let inner = "c\(aliasCount)"
                    let source = try subquerySource(
                        relationship,
                        owner: current,
                        ownerAlias: currentAlias,
                        alias: inner
                    )
                    return .count(Fragment(sql: "(SELECT count(*) FROM \(source.sql) WHERE \(source.link))"))
                }
                if let operatorName = rest.first(where: { $0.hasPrefix("@") }) {
                    throw failure("the collection operator \(operatorName) is not supported (only @count)")
                }
                return .toMany(relationship, owner: current, ownerAlias: currentAlias, rest: rest)
            }
            guard case .toOne(let column, _, _)? = mapping?.properties[name],
                let destinationTable = schema.entities[destination.name]?.table
            else {
                throw failure("\(current.name).\(name) is not stored in the store")
            }
            if isLast {
                return .toOne(
                    Fragment(sql: "\(currentAlias).\(SQLIdentifier.quoted(column))"),
                    destination: destination
                )
            }
            let key = currentAlias + "." + name
            if let known = scope.aliases[key] {
                currentAlias = known
            } else {
                let joined = "\(currentAlias)_\(offset)_\(scope.aliases.count)"
                scope.joins.append(
                    "LEFT JOIN \(SQLIdentifier.quoted(destinationTable)) \(joined) ON \(joined).Z_PK = \(currentAlias).\(SQLIdentifier.quoted(column))"
                )
                scope.aliases[key] = joined
                currentAlias = joined
            }
            current = destination
        }
        return .object(Fragment(sql: "\(currentAlias).Z_PK"), entity: current)
    }

    // MARK: Scalars and objects

    mutating func scalar(
        _ comparison: PredicateComparison,
        _ resolved: Resolved,
        rightAt rightPlace: Place
    ) throws(CoreDataError) -> Fragment {
        switch resolved {
        case .attribute(let left, let attribute):
            return try compare(left, attribute, comparison, rightAt: rightPlace)
        case .count(let left):
            return try compare(left, nil, comparison, rightAt: rightPlace)
        case .toOne(let left, let destination), .object(let left, let destination):
            return try compareObject(left, of: destination, comparison)
        case .toMany:
            throw failure("a to-many cannot be compared as a value")
        }
    }

    /// `left` (a key of an object of `entity` or its subentities) compared with object arguments. An
    /// identity of another store, of an entity outside that hierarchy, or not saved yet names no row of
    /// it: it matches nothing.
    private func compareObject(
        _ left: Fragment,
        of entity: Entity,
        _ comparison: PredicateComparison
    ) throws(CoreDataError) -> Fragment {
        let hierarchy = Set(model.hierarchy(from: entity).map(\.name))
        let values: [PredicateValue]
        switch comparison.right {
        case .value(.list(let items)): values = items
        case .value(let value): values = [value]
        case .aggregate(let items):
            var collected: [PredicateValue] = []
            for item in items {
                guard case .value(let value) = item else { throw failure("an object list holds only values") }
                collected.append(value)
            }
            values = collected
        case .keyPath: throw failure("objects are compared with objects given as arguments")
        }
        var keys: [SQLiteValue] = []
        var includesNull = false
        for value in values {
            switch value {
            case .null: includesNull = true
            case .object(let id):
                if let pk = id.pk, id.storeIdentifier == storeIdentifier, hierarchy.contains(id.entityName) {
                    keys.append(.integer(pk))
                }
            default: throw failure("a relationship is compared with objects or nil, not \(value)")
            }
        }
        let membership =
            keys.isEmpty ? "0" : "\(left.sql) IN (\(keys.map { _ in "?" }.joined(separator: ", ")))"
        let matches = includesNull ? "(\(membership) OR \(left.sql) IS NULL)" : membership
        switch comparison.op {
        case .equal, .inCollection, .contains:
            return Fragment(sql: matches, arguments: keys)
        case .notEqual:
            return Fragment(sql: "NOT coalesce((\(matches)), 0)", arguments: keys)
        default:
            throw failure("objects support ==, != and IN, not \(comparison.op.rawValue)")
        }
    }

    /// `left op right` for an attribute (or a count): `right` is a value, a list, or a key path resolved at
    /// `rightPlace`. `nil == nil` holds (SQL's `IS`). `BEGINSWITH`, `ENDSWITH` and `CONTAINS` with an
    /// empty string match nothing, as NSString's prefix, suffix and range searches find no empty string.
    private mutating func compare(
        _ left: Fragment,
        _ attribute: Attribute?,
        _ comparison: PredicateComparison,
        rightAt rightPlace: Place
    ) throws(CoreDataError) -> Fragment {
        let flags = (comparison.caseInsensitive ? 1 : 0) | (comparison.diacriticInsensitive ? 2 : 0)
        let fold = { (sql: String) in flags == 0 ? sql : "coexist_fold(\(sql), \(flags))" }
        // The right side: one value, a list of values, or another attribute of the same row.
        var rightSQL: String
        var rightRaw = "?"
        var arguments: [SQLiteValue] = []
        var list: [SQLiteValue] = []
        var isList = false
        switch comparison.right {
        case .keyPath(let path):
            let resolved = try resolve(
                path,
                entity: rightPlace.entity,
                alias: rightPlace.alias,
                scope: rightPlace.scope
            )
            guard case .attribute(let fragment, _) = resolved else {
                throw failure("\(path.joined(separator: ".")) is not an attribute to compare with")
            }
            rightSQL = fold(fragment.sql)
            rightRaw = fragment.sql
        case .value(.list(let items)):
            isList = true
            for item in items { list.append(try encode(item, attribute)) }
            rightSQL = ""
        case .aggregate(let items):
            isList = true
            for item in items {
                guard case .value(let value) = item else { throw failure("a list holds only values") }
                list.append(try encode(value, attribute))
            }
            rightSQL = ""
        case .value(let value):
            if comparison.op == .matches, case .string(let pattern) = value,
                PredicateFunctions.RegexCache().regex(pattern, 0) == nil
            {
                throw failure("MATCHES: \"\(pattern)\" is not a regular expression")
            }
            let encoded = try encode(value, attribute)
            if case .null = encoded {
                switch comparison.op {
                case .equal: return Fragment(sql: "\(left.sql) IS NULL")
                case .notEqual: return Fragment(sql: "\(left.sql) IS NOT NULL")
                default: return Fragment(sql: "0")
                }
            }
            rightSQL = fold("?")
            arguments = [encoded]
        }
        let lhs = fold(left.sql)
        let single = { (sql: String, count: Int) in
            Fragment(sql: sql, arguments: Array(repeating: arguments, count: count).flatMap { $0 })
        }
        if isList {
            switch comparison.op {
            case .inCollection, .equal:
                let present = list.filter { !$0.isNull }
                let membership =
                    present.isEmpty ? "0" : "\(lhs) IN (\(present.map { _ in fold("?") }.joined(separator: ", ")))"
                let sql = present.count < list.count ? "(\(membership) OR \(left.sql) IS NULL)" : membership
                return Fragment(sql: sql, arguments: present)
            case .between:
                guard list.count == 2 else { throw failure("BETWEEN needs two values, found \(list.count)") }
                return Fragment(sql: "\(lhs) BETWEEN \(fold("?")) AND \(fold("?"))", arguments: list)
            default:
                throw failure("\(comparison.op.rawValue) compares with one value, not a list")
            }
        }
        switch comparison.op {
        case .equal: return single("\(lhs) IS \(rightSQL)", 1)
        case .notEqual: return single("\(lhs) IS NOT \(rightSQL)", 1)
        case .less: return single("\(lhs) < \(rightSQL)", 1)
        case .lessOrEqual: return single("\(lhs) <= \(rightSQL)", 1)
        case .greater: return single("\(lhs) > \(rightSQL)", 1)
        case .greaterOrEqual: return single("\(lhs) >= \(rightSQL)", 1)
        case .beginsWith:
            return single("(length(\(rightSQL)) > 0 AND substr(\(lhs), 1, length(\(rightSQL))) = \(rightSQL))", 3)
        case .endsWith:
            return single(
                "(length(\(rightSQL)) > 0 AND length(\(lhs)) >= length(\(rightSQL)) AND substr(\(lhs), length(\(lhs)) - length(\(rightSQL)) + 1) = \(rightSQL))",
                4
            )
        case .contains: return single("(length(\(rightSQL)) > 0 AND instr(\(lhs), \(rightSQL)) > 0)", 2)
        case .like: return single("coexist_like(\(left.sql), \(rightRaw), \(flags))", 1)
        case .matches: return single("coexist_matches(\(left.sql), \(rightRaw), \(flags))", 1)
        case .inCollection, .between:
            throw failure("\(comparison.op.rawValue) needs a list on its right")
        }
    }

    /// A constant encoded as the compared attribute is stored (numbers as numbers, dates as seconds since
    /// 2001, UUIDs and data as blobs).
    func encode(_ value: PredicateValue, _ attribute: Attribute?) throws(CoreDataError) -> SQLiteValue {
        let type = attribute?.type
        switch value {
        case .null: return .null
        case .bool(let flag): return .integer(flag ? 1 : 0)
        case .integer(let number): return .integer(number)
        case .real(let number): return .real(number)
        case .decimal(let number): return .real(NSDecimalNumber(decimal: number).doubleValue)
        case .date(let date): return .real(date.timeIntervalSinceReferenceDate)
        case .uuid(let uuid): return .blob(withUnsafeBytes(of: uuid.uuid) { Array($0) })
        case .data(let data): return .blob([UInt8](data))
        case .url(let url): return .text(url.absoluteString)
        case .string(let text):
            switch type {
            case .uuid?:
                guard let uuid = UUID(uuidString: text) else { throw failure("\(text) is not a UUID") }
                return .blob(withUnsafeBytes(of: uuid.uuid) { Array($0) })
            case .string?, .uri?, nil:
                return .text(text)
            case let other?:
                throw failure("\(attribute?.name ?? "") is \(other.xmlName), compared with the string \"\(text)\"")
            }
        case .object: throw failure("\(attribute?.name ?? "a value") is an attribute, compared with an object")
        case .list: throw failure("a list is compared with IN or BETWEEN")
        }
    }
}
