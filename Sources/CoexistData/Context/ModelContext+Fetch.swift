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
        // Each row's values come with it: its record is made as it is read, without a query each; the
        // relationships of those whose rows name targets are loaded after the query.
        var found: [Registration] = []
        var layouts = RecordLayouts(schema: Model.erasedSchema, only: try fetchedNames(descriptor, plan))
        // A context that holds nothing yet (the common first fetch) looks nothing up: the query reads each row
        // once (by primary key), so no reference comes twice.
        let holdsNone = byRef.isEmpty
        let entity = Model.schema.entity
        try materializing { batch in
            try store.connection.forEachRow(plan.sql, plan.arguments) { row in
                let ref = ObjectRef(entity: row.text(1) ?? entity, id: row.text(0) ?? "")
                if !holdsNone, let held = byRef[ref] {
                    // Filled from this row only when the held record is of the fetch's type (the slots are its).
                    if !held.unfetched.isEmpty, layouts.only == nil, held.schema.type == layouts.schema.type {
                        try fill(held, from: layouts.read(row, ref, store))
                    }
                    found.append(held)
                } else {
                    found.append(try make(layouts.read(row, ref, store), in: &batch))
                }
            }
        }
        var result: [Model] = []
        result.reserveCapacity(found.count)
        for registration in found {
            guard !registration.deleted, let record = registration.object as? Model else { continue }
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
            let ref = ObjectRef(entity: row.text(1) ?? Model.schema.entity, id: row.text(0) ?? "")
            if byRef[ref]?.deleted == true { return }
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

    /// The attributes a fetch with `descriptor` reads: nil for all (no `propertiesToFetch`, or a predicate or
    /// sort that runs in memory), else those listed and the identity.
    func fetchedNames<Model: PersistentModel>(
        _ descriptor: FetchDescriptor<Model>,
        _ plan: FetchPlan
    ) throws -> Set<String>? {
        guard !descriptor.propertiesToFetch.isEmpty, plan.exact, plan.sortedInSQL || descriptor.sortBy.isEmpty else {
            return nil
        }
        let schema = Model.erasedSchema
        var names: Set<String> = []
        for keyPath in descriptor.propertiesToFetch {
            guard let name = schema.keyPaths[keyPath] else {
                throw StoreError.validation(
                    path: store.path,
                    detail: "propertiesToFetch: \(keyPath) is not a property of \(schema.entity)'s record schema"
                )
            }
            names.insert(name)
        }
        switch store.schema.entities[schema.entity]?.identity {
        case .uuidAttribute(let name), .textAttribute(let name): names.insert(name)
        case .generated, nil: break
        }
        return names
    }

    /// Reads into a record a fetch with `propertiesToFetch` made the attributes it left unread, except those
    /// the app has set since.
    func fill(_ registration: Registration, from row: StoredRow) throws {
        guard var snapshot = registration.snapshot, registration.schema.type == row.layout.schema.type else { return }
        let current = registration.schema.readAttributes(registration.object)
        for slot in registration.unfetched {
            guard case .position(let position) = row.layout.attributeSources[slot] else { continue }
            let attribute = registration.schema.attributes[slot]
            if current[slot] == snapshot.attributes[slot] {
                guard let kept = attribute.write(registration.object, row.attributes[position]) else {
                    // All or nothing: the slots filled already get back what the record held.
                    for (index, value) in current.enumerated() {
                        _ = registration.schema.attributes[index].write(registration.object, value)
                    }
                    throw StoreError.invalidData(
                        path: store.path,
                        detail:
                            "\(registration.ref): the stored \(attribute.name) does not fit the record type's property"
                    )
                }
                snapshot.attributes[slot] = kept
            } else if let stored = attribute.write(registration.object, row.attributes[position]) {
                // The app's value stays (and is saved next); the snapshot is what the file holds.
                snapshot.attributes[slot] = stored
                _ = attribute.write(registration.object, current[slot])
            }
        }
        registration.snapshot = snapshot
        registration.unfetched = []
    }

    /// Whether records are deleted in the context and not saved yet.
    var hasPendingDeletes: Bool { registrations.values.contains(where: \.deleted) }
}

/// A row a fetch read, before its record is made: its reference, its attribute values and to-ones as the
/// store decoded them, and how they map onto the record type's slots.
struct StoredRow {
    let ref: ObjectRef
    let layout: RecordLayout
    let attributes: [AttributeValue]
    let toOnes: [[ObjectRef]]
}

/// How the rows of one concrete entity become records of one type (a class: every row of a fetch holds it).
final class RecordLayout {
    /// Where a record attribute's value comes from.
    enum Source {
        /// The decoded attribute at this position.
        case position(Int)
        /// The entity stores no such attribute: nil.
        case absent
        /// Not read (`propertiesToFetch`): the record keeps what it was made with.
        case skipped
    }

    let schema: ErasedSchema
    let decoder: RowDecoder
    /// By attribute slot of the record type: a position among the row's decoded attributes.
    let attributeSources: [Source]
    /// The decoder's attributes a row reads (those the record maps and reads), in the record's slot order:
    /// a column the record does not read is neither decoded nor checked.
    let decoded: [Int]
    /// Whether the row's decoded values are the record's attributes by slot (it reads every one, and the
    /// entity stores each).
    let bySlot: Bool
    /// By relationship slot: the position of its targets among the decoded to-ones (nil: read with a query).
    let toOneSources: [Int?]
    /// The relationship slots whose targets are read with a query.
    let queriedSlots: [Int]

    /// Whether a row with the to-one targets `toOnes` (as ``RowDecoder/toOnes(of:)`` gives them) leaves no
    /// relationship to a query and names no target: its record has nothing to load.
    func namesNoTarget(_ toOnes: [[ObjectRef]]) -> Bool { queriedSlots.isEmpty && toOnes.allSatisfy { $0.isEmpty } }

    /// The layout of `decoder`'s rows for `schema`, reading the attributes in `only` (all when nil).
    init(schema: ErasedSchema, decoder: RowDecoder, only: Set<String>?) {
        self.schema = schema
        self.decoder = decoder
        let attributes = Dictionary(decoder.attributeNames.enumerated().map { ($1, $0) }) { first, _ in first }
        let toOnes = Dictionary(decoder.toOneNames.enumerated().map { ($1, $0) }) { first, _ in first }
        var decoded: [Int] = []
        attributeSources = schema.attributes.map { attribute in
            if let only, !only.contains(attribute.name) { return .skipped }
            guard let position = attributes[attribute.name] else { return .absent }
            decoded.append(position)
            return .position(decoded.count - 1)
        }
        self.decoded = decoded
        bySlot = decoded.count == schema.attributes.count
        let targets = schema.relationships.map { $0.kind == .toOne ? toOnes[$0.name] : nil }
        toOneSources = targets
        queriedSlots = targets.indices.filter { targets[$0] == nil }
    }
}

/// The layouts of one query's rows, by concrete entity, made at the first row of each.
struct RecordLayouts {
    let schema: ErasedSchema
    /// The attributes read (all when nil).
    let only: Set<String>?
    private var byEntity: [String: RecordLayout] = [:]
    private var last: RecordLayout?

    init(schema: ErasedSchema, only: Set<String>? = nil) {
        self.schema = schema
        self.only = only
    }

    /// What `row` (the row of `ref`) holds.
    mutating func read(_ row: Row, _ ref: ObjectRef, _ store: NewStore) throws -> StoredRow {
        let layout: RecordLayout
        if let last, last.decoder.entity == ref.entity {
            layout = last
        } else if let known = byEntity[ref.entity] {
            layout = known
        } else {
            layout = RecordLayout(
                schema: schema,
                decoder: try store.rowDecoder(for: ref.entity, columnsOf: row),
                only: only
            )
            byEntity[ref.entity] = layout
        }
        last = layout
        return StoredRow(
            ref: ref,
            layout: layout,
            attributes: try layout.decoder.attributes(of: row, id: ref.id, at: layout.decoded),
            toOnes: layout.decoder.toOnes(of: row)
        )
    }
}
