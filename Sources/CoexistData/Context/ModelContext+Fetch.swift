import CoexistModel
import CoexistSQLite
public import CoexistStore
import FoundationEssentials
import FoundationInternationalization

extension ModelContext {
    /// How one fetch runs: its SQL, and what is left to do in memory.
    struct FetchPlan {
        var sql: String
        var arguments: [SQLiteValue]
        /// The SQL condition selects exactly the matching rows (no in-memory filtering needed).
        var exact: Bool
        var sortedInSQL: Bool
        var limitedInSQL: Bool
    }

    /// The records matching `descriptor`, in its order.
    public func fetch<Model: PersistentModel>(_ descriptor: FetchDescriptor<Model>) throws -> [Model] {
        let plan = try plan(descriptor, everyColumn: true)
        // Each row's values come with it: records are made after the query, without a query each.
        var rows: [(ref: ObjectRef, values: StoredValues?)] = []
        try store.connection.forEachRow(plan.sql, plan.arguments) { row in
            let ref = ObjectRef(entity: row[1].textValue ?? Model.schema.entity, id: row[0].textValue ?? "")
            rows.append((ref, byRef[ref] == nil ? try store.values(of: ref, in: row) : nil))
        }
        var result: [Model] = []
        for (ref, values) in rows {
            guard let record = try materialize(ref, as: Model.self, stored: values) as? Model else { continue }
            if registrations[ObjectIdentifier(record)]?.deleted == true { continue }
            if !plan.exact, let filter = descriptor.combined, try !filter.evaluate(record) { continue }
            result.append(record)
        }
        if !plan.sortedInSQL, !descriptor.sortBy.isEmpty { result.sort(using: descriptor.sortBy) }
        if !plan.limitedInSQL {
            result = Array(result.dropFirst(min(descriptor.fetchOffset ?? 0, result.count)))
            if let limit = descriptor.fetchLimit { result = Array(result.prefix(max(0, limit))) }
        }
        return result
    }

    /// The identifiers of the records matching `descriptor`, in its order (SwiftData's `fetchIdentifiers`):
    /// read from SQL alone, without making records, when the predicate and the sort translate exactly;
    /// records deleted in the context are left out.
    public func fetchIdentifiers<Model: PersistentModel>(
        _ descriptor: FetchDescriptor<Model>
    ) throws -> [PersistentIdentifier] {
        let plan = try plan(descriptor)
        guard plan.exact, plan.sortedInSQL || descriptor.sortBy.isEmpty else {
            return try fetch(descriptor).compactMap { persistentIdentifier(of: $0) }
        }
        var identifiers: [PersistentIdentifier] = []
        try store.connection.forEachRow(plan.sql, plan.arguments) { row in
            let ref = ObjectRef(entity: row[1].textValue ?? Model.schema.entity, id: row[0].textValue ?? "")
            if let held = byRef[ref], registrations[held]?.deleted == true { return }
            identifiers.append(ref)
        }
        if !plan.limitedInSQL {
            identifiers = Array(identifiers.dropFirst(min(descriptor.fetchOffset ?? 0, identifiers.count)))
            if let limit = descriptor.fetchLimit { identifiers = Array(identifiers.prefix(max(0, limit))) }
        }
        return identifiers
    }

    /// The number of records matching `descriptor` (counted in SQL when the predicate translates exactly).
    public func fetchCount<Model: PersistentModel>(_ descriptor: FetchDescriptor<Model>) throws -> Int {
        var all = descriptor
        all.fetchLimit = nil
        all.fetchOffset = nil
        all.sortBy = []
        let plan = try plan(all)
        guard plan.exact, !hasPendingDeletes else { return try fetch(descriptor).count }
        let count = Int(
            try store.connection.scalar("SELECT count(*) FROM (\(plan.sql))", plan.arguments).integerValue ?? 0
        )
        let afterOffset = max(0, count - (descriptor.fetchOffset ?? 0))
        return descriptor.fetchLimit.map { min(max(0, $0), afterOffset) } ?? afterOffset
    }

    /// How `descriptor` runs; `everyColumn` selects every column of the table after `id` and `kind`.
    func plan<Model: PersistentModel>(
        _ descriptor: FetchDescriptor<Model>,
        everyColumn: Bool = false
    ) throws -> FetchPlan {
        let schema = Model.erasedSchema
        guard let mapping = store.schema.entities[schema.entity], let entity = store.model.entity(named: schema.entity)
        else {
            throw StoreError.mismatch(path: store.path, detail: "record entity \(schema.entity) is not in the model")
        }
        let translator = PredicateTranslator(store: store) { [unowned self] object in identity(of: object) }
        let condition =
            descriptor.combined.map { translator.condition($0) }
            ?? SQLFragment(sql: "1", arguments: [], exact: true, kind: .condition)
        var sql =
            "SELECT t0.\"id\", \(mapping.hasKindColumn ? "t0.\"kind\"" : "NULL")\(everyColumn ? ", t0.*" : "") FROM \(SQLIdentifier.quoted(mapping.table)) t0 WHERE "
        var arguments: [SQLiteValue] = []
        if mapping.hasKindColumn {
            let kinds = store.model.hierarchy(from: entity).map(\.name)
            sql += "t0.\"kind\" IN (\(kinds.map { _ in "?" }.joined(separator: ", "))) AND "
            arguments += kinds.map { .text($0) }
        }
        sql += "(\(condition.sql))"
        arguments += condition.arguments
        var terms: [String] = []
        var sortable = true
        for sort in descriptor.sortBy {
            guard let keyPath = sort.keyPath, let name = schema.keyPaths[keyPath],
                case .column(let column, let encoding) = mapping.properties[name],
                [.integer16, .integer32, .integer64, .boolean, .real, .dateReal].contains(encoding)
            else {
                sortable = false
                break
            }
            terms.append("t0.\(SQLIdentifier.quoted(column)) \(sort.order == .forward ? "ASC" : "DESC")")
        }
        let sortedInSQL = sortable && !terms.isEmpty
        sql += " ORDER BY " + (sortedInSQL ? terms.joined(separator: ", ") + ", " : "") + "t0.rowid"
        // Records deleted in the context are left out after the query: a limit in SQL would count them.
        let limitedInSQL = condition.exact && (sortable || descriptor.sortBy.isEmpty) && !hasPendingDeletes
        if limitedInSQL, descriptor.fetchLimit != nil || descriptor.fetchOffset != nil {
            sql += " LIMIT ? OFFSET ?"
            arguments += [
                .integer(Int64(max(0, descriptor.fetchLimit ?? -1))),
                .integer(Int64(max(0, descriptor.fetchOffset ?? 0))),
            ]
            if descriptor.fetchLimit == nil { arguments[arguments.count - 2] = .integer(-1) }
        }
        return FetchPlan(
            sql: sql,
            arguments: arguments,
            exact: condition.exact,
            sortedInSQL: sortedInSQL,
            limitedInSQL: limitedInSQL
        )
    }

    /// Whether records are deleted in the context and not saved yet.
    var hasPendingDeletes: Bool { registrations.values.contains(where: \.deleted) }

    /// A row's attribute values and the to-ones it answers, read with the fetch's own query.
    typealias StoredValues = (attributes: [String: AttributeValue], toOnes: [String: [ObjectRef]])

    /// The record object for `ref`: the registered one, or a new one loaded from the database (nil when the
    /// row does not exist); `stored`, what the fetch read of the row already.
    func materialize(
        _ ref: ObjectRef,
        as type: (any PersistentModel.Type)?,
        stored: StoredValues? = nil
    ) throws -> AnyObject? {
        if let known = byRef[ref], let registration = registrations[known] { return registration.object }
        guard let schema = type?.erasedSchema ?? nil, let values = try stored?.attributes ?? store.values(of: ref)
        else {
            return nil
        }
        let object = schema.make()
        for (name, write) in schema.writeAttribute {
            guard write(object, values[name] ?? .null) else {
                throw StoreError.invalidData(
                    path: store.path,
                    detail: "\(ref): the stored \(name) does not fit the record type's property"
                )
            }
        }
        let registration = Registration(object: object, ref: ref, schema: schema)
        registrations[ObjectIdentifier(object)] = registration
        byRef[ref] = ObjectIdentifier(object)
        insertionOrder.append(ObjectIdentifier(object))
        try reload(registration, toOnes: stored?.toOnes ?? [:])
        return object
    }
}
