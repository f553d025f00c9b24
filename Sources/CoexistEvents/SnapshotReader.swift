import CoexistBridge
import CoexistHistory
import CoexistModel
import CoexistProtocol
import CoexistSQLite
import CoexistStore

/// The current rows of a snapshot subscription's entities (`"since":"snapshot"`), read from the new schema
/// in one read transaction on a connection of their own, a page at a time as the subscriber's queue takes
/// them, as `{"type":"row"}` messages. The transaction starts only at a moment when the file's two schemas
/// agree (``CoexistBridge/SyncEngine/agreedToken(_:)``), so the rows are the state as of that token and the
/// changes after it follow with no gap and no duplicate.
final class SnapshotReader {
    /// A table of the new schema and the concrete entities wanted from it.
    private struct Table {
        var name: String
        /// The `kind` values wanted (nil: the table has no kind column and holds `entity` alone).
        var kinds: [String]?
        var entity: String
    }

    /// How one entity's rows of one query decode: attributes, and the to-ones' key columns; `fields`, every
    /// value in name order (the order the message lists them).
    private struct Layout {
        enum Source {
            case attribute(Int)
            case toOne(Int)
        }

        var decoder: RowDecoder
        var fields: [(name: String, source: Source)]
        /// The to-manys, by name: written after the other fields, once the page's memberships are read.
        var toManys: [(name: String, ordered: Bool)]
    }

    /// A row message waiting for its to-manys: its place in the page, what is written so far, its object.
    private struct Unfinished {
        var index: Int
        var writer: JSONWriter
        var ref: ObjectRef
        var toManys: [(name: String, ordered: Bool)]
    }

    private let connection: Connection
    private let store: NewStore
    /// The store read through the snapshot's own connection (memberships of to-manys).
    private let reading: NewStore
    private var tables: [Table]
    private var tableIndex = 0
    private var lastRowID: Int64 = 0
    private var layouts: [String: Layout] = [:]
    /// The snapshot's token, once its read transaction started.
    private(set) var token: Int64?
    /// Rows sent so far.
    private(set) var rows = 0
    /// When the snapshot gives up waiting for the schemas to agree (monotonic ns).
    let deadline: UInt64
    /// When its read transaction started (monotonic ns; 0 before).
    var startedAt: UInt64 = 0
    /// The subscriber's bytes written when last looked at, and when they last moved (monotonic ns).
    var writtenAtCheck = -1
    var progressAt: UInt64 = 0

    /// A reader of the rows of `entities` (concrete names; nil: every entity) of `store`'s file.
    init(store: NewStore, entities: Set<String>?, deadline: UInt64) throws {
        connection = try Connection(path: store.path, options: .readOnly)
        self.store = store
        reading = NewStore(connection: connection, schema: store.schema)
        self.deadline = deadline
        var byTable: [String: Table] = [:]
        var order: [String] = []
        for entity in store.model.entities where !entity.isAbstract && (entities?.contains(entity.name) ?? true) {
            guard let mapping = store.schema.entities[entity.name] else { continue }
            if byTable[mapping.table] == nil {
                order.append(mapping.table)
                byTable[mapping.table] = Table(
                    name: mapping.table,
                    kinds: mapping.hasKindColumn ? [] : nil,
                    entity: entity.name
                )
            }
            byTable[mapping.table]?.kinds?.append(entity.name)
        }
        tables = order.compactMap { byTable[$0] }
    }

    deinit { close() }

    /// Starts the read transaction if the schemas agree now; false when they do not (yet).
    func begin() throws -> Bool {
        try connection.execute("BEGIN")
        do {
            if let agreed = try SyncEngine.agreedToken(connection) {
                token = agreed
                return true
            }
            try connection.execute("ROLLBACK")
            return false
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    /// Up to `limit` row messages; empty once every row is read (the read transaction is over then).
    func nextRows(limit: Int) throws -> [[UInt8]] {
        guard let token else { return [] }
        // Read in the snapshot's transaction only: rows read outside it would be of a later state.
        guard !connection.isAutocommit else {
            throw EventError(code: .internalError, message: "the snapshot's read transaction ended early")
        }
        var lines: [[UInt8]] = []
        while lines.isEmpty, tableIndex < tables.count {
            let table = tables[tableIndex]
            var sql =
                "SELECT t0.rowid, t0.\"id\", \(table.kinds == nil ? "NULL" : "t0.\"kind\""), t0.* FROM "
                + "\(SQLIdentifier.quoted(table.name)) t0 WHERE t0.rowid > ?"
            var arguments: [SQLiteValue] = [.integer(lastRowID)]
            if let kinds = table.kinds {
                sql += " AND t0.\"kind\" IN (\(kinds.map { _ in "?" }.joined(separator: ", ")))"
                arguments += kinds.map { .text($0) }
            }
            sql += " ORDER BY t0.rowid LIMIT ?"
            arguments.append(.integer(Int64(max(1, limit))))
            var read = 0
            var pageEnd = lastRowID
            var unfinished: [Unfinished] = []
            // The page's position moves only once every row of it is a message.
            try connection.forEachRow(sql, arguments) { row in
                read += 1
                pageEnd = row[0].integerValue ?? pageEnd
                guard let id = row[1].textValue else { return }
                let entity = row[2].textValue ?? table.entity
                let (writer, toManys) = try line(row, entity: entity, id: id, table: table.name, token)
                if toManys.isEmpty {
                    lines.append(Self.finish(writer))
                } else {
                    unfinished.append(
                        Unfinished(
                            index: lines.count,
                            writer: writer,
                            ref: ObjectRef(entity: entity, id: id),
                            toManys: toManys
                        )
                    )
                    lines.append([])
                }
            }
            try finish(unfinished, into: &lines)
            lastRowID = pageEnd
            if read < limit {
                tableIndex += 1
                lastRowID = 0
                layouts = [:]
            }
        }
        rows += lines.count
        if lines.isEmpty { close() }
        return lines
    }

    /// Ends the read transaction and closes the connection.
    func close() {
        if !connection.isAutocommit { try? connection.execute("COMMIT") }
    }

    /// A row's message up to its to-manys (the values object still open), and the to-manys to add.
    private func line(
        _ row: Row,
        entity: String,
        id: String,
        table: String,
        _ token: Int64
    ) throws -> (JSONWriter, [(name: String, ordered: Bool)]) {
        let layout = try self.layout(entity, row)
        let attributes = try layout.decoder.attributes(of: row, id: id)
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("type")
        writer.string("row")
        writer.key("token")
        writer.integer(token)
        writer.key("entity")
        writer.string(entity)
        writer.key("newTable")
        writer.string(table)
        writer.key("id")
        writer.string(id)
        writer.key("values")
        writer.beginObject()
        for (name, source) in layout.fields {
            writer.key(named: name)
            switch source {
            case .attribute(let index): EventSource.write(attributes[index], &writer)
            case .toOne(let position): writer.string(row[position].textValue)
            }
        }
        return (writer, layout.toManys)
    }

    /// Closes a row's message.
    private static func finish(_ writer: JSONWriter) -> [UInt8] {
        var writer = writer
        writer.endObject()
        writer.endObject()
        return writer.line
    }

    /// Adds their to-manys to the page's rows that have some (one query per relationship and chunk of
    /// objects, in the snapshot's transaction) and puts their messages in their places.
    private func finish(_ unfinished: [Unfinished], into lines: inout [[UInt8]]) throws {
        guard !unfinished.isEmpty else { return }
        var members: [String: [String: [ObjectRef: [ObjectRef]]]] = [:]  // entity → relationship → owner → targets
        var memberCounts: [String: [String: [ObjectRef: Int]]] = [:]
        var owners: [String: [ObjectRef]] = [:]
        for row in unfinished { owners[row.ref.entity, default: []].append(row.ref) }
        for (entity, refs) in owners {
            for relationship in unfinished.first(where: { $0.ref.entity == entity })?.toManys ?? [] {
                // Counted first: the members of a to-many too large to list are never read.
                let counts = try reading.relatedCounts(refs, relationship.name)
                memberCounts[entity, default: [:]][relationship.name] = counts
                let listed = refs.filter { counts[$0, default: 0] <= RecordedValues.maxListedMembers }
                members[entity, default: [:]][relationship.name] = try reading.related(listed, relationship.name)
            }
        }
        for row in unfinished {
            var writer = row.writer
            for relationship in row.toManys {
                writer.key(named: relationship.name)
                let count = memberCounts[row.ref.entity]?[relationship.name]?[row.ref] ?? 0
                let targets = members[row.ref.entity]?[relationship.name]?[row.ref] ?? []
                let value =
                    count > RecordedValues.maxListedMembers
                    ? EventValue.memberCount(count)
                    : EventValue.members(targets.map(\.id), ordered: relationship.ordered)
                value.write(&writer)
            }
            lines[row.index] = Self.finish(writer)
        }
    }

    private func layout(_ entity: String, _ row: Row) throws -> Layout {
        if let known = layouts[entity] { return known }
        var positions: [String: Int] = [:]
        for index in 0..<row.count where positions[row.name(index)] == nil { positions[row.name(index)] = index }
        let decoder = try store.rowDecoder(for: entity, columnsOf: row)
        var fields = decoder.attributeNames.enumerated().map { (name: $1, source: Layout.Source.attribute($0)) }
        if let described = store.model.entity(named: entity), let mapping = store.schema.entities[entity] {
            for relationship in store.model.allRelationships(of: described)
            where !relationship.isToMany && !relationship.isTransient {
                if case .toOne(let column, _)? = mapping.properties[relationship.name], let position = positions[column]
                {
                    fields.append((relationship.name, .toOne(position)))
                }
            }
        }
        fields.sort { $0.name < $1.name }
        let toManys = (store.model.entity(named: entity).map(store.model.allRelationships(of:)) ?? [])
            .filter { $0.isToMany && !$0.isTransient }
            .map { (name: $0.name, ordered: $0.isOrdered) }
            .sorted { $0.name < $1.name }
        let layout = Layout(decoder: decoder, fields: fields, toManys: toManys)
        layouts[entity] = layout
        return layout
    }
}
