import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import CoexistStore

/// The legacy inserts of a snapshot written set-based: per concrete entity, one `INSERT … SELECT` from the
/// Core Data table into the new table (values converted by the same codecs as one object at a time, through
/// an SQL function), one for their identities, one for their parked-object rows; the save records them in
/// its history as it records any insert. What it cannot write exactly so is left to the object path: an
/// entity with uniqueness constraints or sub-structures it does not handle (join tables, ordered
/// relationships, to-manys without an inverse, a generated identity), a model with derived attributes, an
/// object whose identity is missing, taken or shared, and an object whose to-one points at an object the
/// new side does not hold.
struct SetInserts {
    /// How one concrete entity's rows are copied.
    struct Copy {
        let entity: String
        let root: String
        let legacyTable: String
        let number: Int
        let newTable: String
        let kind: String?
        /// The SQL computing the identity from the legacy row `s`.
        let identity: String
        /// New column and the SQL computing it from the legacy row `s`.
        var columns: [(name: String, expression: String)]
        /// The stored attributes (the identity aside): new column and the SQL computing it from `s`.
        var attributes: [String: (column: String, expression: String)] = [:]
        /// Legacy to-one columns, their destination's root entity and its new table.
        var foreignKeys: [(column: String, root: String, table: String)]
    }

    let engine: SyncEngine

    /// Writes what it can of `ids` (legacy objects the snapshot inserted); returns those written.
    func insert(_ ids: [ObjectID], save: NewSave) throws -> Set<ObjectID> {
        guard engine.derived.names.isEmpty, !ids.isEmpty else { return [] }
        var byEntity: [String: [Int64]] = [:]
        for id in ids { byEntity[id.entity, default: []].append(id.pk) }
        var plans: [(Copy, [Int64])] = []
        for (entity, pks) in byEntity.sorted(by: { $0.key < $1.key }) {
            if let copy = try engine.setCopy(entity) { plans.append((copy, pks)) }
        }
        guard !plans.isEmpty else { return [] }
        // The candidates: an identity no object has yet, once in the snapshot, no row in the new table.
        var candidates: [(Copy, [(pk: Int64, id: String)])] = []
        for (copy, pks) in plans {
            candidates.append((copy, try fresh(copy, pks)))
        }
        let connection = engine.connection
        for (copy, rows) in candidates where !rows.isEmpty {
            try connection.run(
                "INSERT INTO coexist_identity (entity, pk, id) SELECT ?, value ->> 0, value ->> 1 FROM json_each(?)",
                [.text(copy.root), .text(Self.json(rows))]
            )
        }
        // Leave out, until nothing changes, the objects whose to-one points at an object the new side neither
        // holds nor gets here (not mirrored yet, or deleted there since: the object path decides those).
        var changed = true
        while changed {
            changed = false
            var incoming: [String: [Int64]] = [:]
            for (copy, rows) in candidates { incoming[copy.root, default: []] += rows.map(\.pk) }
            for index in candidates.indices where !candidates[index].0.foreignKeys.isEmpty {
                let (copy, rows) = candidates[index]
                let dangling = try self.dangling(copy, rows.map(\.pk), incoming: incoming)
                guard !dangling.isEmpty else { continue }
                try connection.run(
                    "DELETE FROM coexist_identity WHERE entity = ? AND pk IN (SELECT value FROM json_each(?))",
                    [.text(copy.root), .text(Self.list(Array(dangling)))]
                )
                candidates[index].1 = rows.filter { !dangling.contains($0.pk) }
                changed = true
            }
        }
        var written: Set<ObjectID> = []
        for (copy, rows) in candidates where !rows.isEmpty {
            try write(copy, rows)
            try save.noteInserted(rows.map { ObjectRef(entity: copy.entity, id: $0.id) })
            for row in rows { written.insert(ObjectID(entity: copy.entity, pk: row.pk)) }
            engine.copiedInPass += rows.count
            try connection.run(
                """
                DELETE FROM coexist_parked_object WHERE side = 'legacy' AND entity = ?
                AND pk IN (SELECT value FROM json_each(?))
                """,
                [.text(copy.root), .text(Self.list(rows.map(\.pk)))]
            )
        }
        return written
    }

    /// Of `pks`, the rows (with their identity) that can be inserted as they are.
    private func fresh(_ copy: Copy, _ pks: [Int64]) throws -> [(pk: Int64, id: String)] {
        // The identity computed once per row (a CTE the planner may not fold into the conditions).
        let rows = try engine.connection.rows(
            """
            WITH c AS MATERIALIZED (
                SELECT s.Z_PK AS pk, \(copy.identity) AS identity FROM \(SQLIdentifier.quoted(copy.legacyTable)) s
                WHERE s.Z_PK IN (SELECT value FROM json_each(?1)) AND s.Z_ENT = ?2
            )
            SELECT pk, identity FROM c
            WHERE NOT EXISTS (SELECT 1 FROM coexist_identity i WHERE i.entity = ?3 AND i.pk = c.pk)
            AND NOT EXISTS (SELECT 1 FROM coexist_identity i WHERE i.entity = ?3 AND i.id = c.identity)
            AND NOT EXISTS (SELECT 1 FROM \(SQLIdentifier.quoted(copy.newTable)) n WHERE n."id" = c.identity)
            ORDER BY pk
            """,
            [
                .text(Self.list(pks)), .integer(Int64(copy.number)),
                .text(copy.root),
            ]
        )
        var seen: [String: Int] = [:]
        var result: [(pk: Int64, id: String)] = []
        for row in rows {
            guard let pk = row[0].integerValue, let id = row[1].textValue else { continue }
            seen[id, default: 0] += 1
            result.append((pk, id))
        }
        try engine.conversions.check()
        return result.filter { seen[$0.id] == 1 }  // an id twice in the snapshot: the object path parks one
    }

    /// Of `pks`, those with a to-one whose destination the new side does not hold (its identity recorded and
    /// its row there) and is not among the objects copied here (`incoming`, by root entity).
    private func dangling(_ copy: Copy, _ pks: [Int64], incoming: [String: [Int64]]) throws -> Set<Int64> {
        guard !pks.isEmpty else { return [] }
        var arguments: [SQLiteValue] = [.text(Self.list(pks))]
        let conditions = copy.foreignKeys.map { key in
            arguments.append(.text(Self.list(incoming[key.root] ?? [])))
            let column = "s." + SQLIdentifier.quoted(key.column)
            return "(\(column) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM coexist_identity i WHERE i.entity = "
                + "'\(key.root)' AND i.pk = \(column) AND (i.pk IN (SELECT value FROM json_each(?\(arguments.count))) "
                + "OR EXISTS (SELECT 1 FROM \(SQLIdentifier.quoted(key.table)) d WHERE d.\"id\" = i.id))))"
        }
        let rows = try engine.connection.rows(
            "SELECT s.Z_PK FROM \(SQLIdentifier.quoted(copy.legacyTable)) s WHERE s.Z_PK IN (SELECT value FROM "
                + "json_each(?1)) AND (" + conditions.joined(separator: " OR ") + ")",
            arguments
        )
        return Set(rows.compactMap { $0[0].integerValue })
    }

    /// A JSON array of keys, for `json_each(?)`.
    static func list(_ pks: [Int64]) -> String { JSONText.integers(pks) }

    /// Inserts `rows` (legacy keys with the identities ``fresh(_:_:)`` computed) into the new table.
    private func write(_ copy: Copy, _ rows: [(pk: Int64, id: String)]) throws {
        var names = ["\"id\""]
        var expressions = ["j.value ->> 1"]
        if let kind = copy.kind {
            names.append("\"kind\"")
            expressions.append("'\(kind)'")
        }
        for column in copy.columns {
            names.append(SQLIdentifier.quoted(column.name))
            expressions.append(column.expression)
        }
        try engine.connection.run(
            "INSERT INTO \(SQLIdentifier.quoted(copy.newTable)) (\(names.joined(separator: ", "))) SELECT "
                + expressions.joined(separator: ", ") + " FROM json_each(?) j CROSS JOIN "
                + "\(SQLIdentifier.quoted(copy.legacyTable)) s ON s.Z_PK = j.value ->> 0 ORDER BY j.key",
            [.text(Self.json(rows))]
        )
        try engine.conversions.check()
    }

    /// A JSON array of `[pk, "id"]` pairs, for `json_each(?)` (an identity attribute may be a String holding
    /// anything).
    static func json(_ rows: [(pk: Int64, id: String)]) -> String {
        var json: [UInt8] = [UInt8(ascii: "[")]
        json.reserveCapacity(2 + rows.count * 52)
        for (index, row) in rows.enumerated() {
            if index > 0 { json.append(UInt8(ascii: ",")) }
            json.append(UInt8(ascii: "["))
            JSONText.append(row.pk, to: &json)
            json.append(UInt8(ascii: ","))
            JSONText.append(row.id, to: &json)
            json.append(UInt8(ascii: "]"))
        }
        json.append(UInt8(ascii: "]"))
        return String(decoding: json, as: UTF8.self)
    }
}

/// The conversions the set-based statements call (`coexist_mirror_value(slot, value)`): the legacy value
/// decoded as Core Data stores it and encoded as the new schema stores it, with the attributes' own codecs.
/// A value either refuses is remembered and thrown after the statement (which then rolls back).
final class MirrorConversions: @unchecked Sendable {
    private(set) var attributes: [Attribute] = []
    private var slots: [String: Int] = [:]
    private var failure: String?

    /// The slot of `attribute` of `entity`.
    func slot(_ entity: String, _ attribute: Attribute) -> Int {
        let key = entity + "." + attribute.name
        if let known = slots[key] { return known }
        attributes.append(attribute)
        slots[key] = attributes.count - 1
        return attributes.count - 1
    }

    func register(on connection: Connection) throws {
        try connection.createFunction("coexist_mirror_value", arity: 2) { [self] arguments in
            guard let slot = arguments[0].integerValue.flatMap(Int.init(exactly:)), attributes.indices.contains(slot)
            else { return .null }
            let attribute = attributes[slot]
            do {
                return try NewValueCodec.encode(try AttributeCodec.decode(arguments[1], as: attribute), as: attribute)
            } catch {
                if failure == nil { failure = "\(attribute.name): \(error)" }
                return .null
            }
        }
    }

    /// SQL converting the legacy value `column` (an SQL expression) of `entity`'s `attribute`: the values
    /// whose stored form is the same on both sides (or a UUID's blob, written as text) are converted in SQL,
    /// exactly as the codecs would; any other value (one either codec would refuse, or needs to look at)
    /// goes through `coexist_mirror_value`.
    func expression(_ entity: String, _ attribute: Attribute, _ column: String) -> String {
        let call = "coexist_mirror_value(\(slot(entity, attribute)), \(column))"
        let same: String
        switch attribute.type {
        case .integer64: same = "typeof(\(column)) = 'integer'"
        case .integer32: same = "typeof(\(column)) = 'integer' AND \(column) BETWEEN -2147483648 AND 2147483647"
        case .integer16: same = "typeof(\(column)) = 'integer' AND \(column) BETWEEN -32768 AND 32767"
        case .boolean: same = "typeof(\(column)) = 'integer' AND \(column) IN (0, 1)"
        case .double, .float, .date: same = "typeof(\(column)) = 'real'"
        case .string, .uri: same = "typeof(\(column)) = 'text'"
        case .binary, .transformable: same = "typeof(\(column)) = 'blob'"
        case .uuid:
            let hex = "hex(\(column))"
            let text =
                "lower(substr(\(hex), 1, 8) || '-' || substr(\(hex), 9, 4) || '-' || substr(\(hex), 13, 4) || '-' || "
                + "substr(\(hex), 17, 4) || '-' || substr(\(hex), 21))"
            return "CASE WHEN \(column) IS NULL THEN NULL WHEN typeof(\(column)) = 'blob' AND length(\(column)) = 16 "
                + "THEN \(text) ELSE \(call) END"
        default: return call
        }
        return "CASE WHEN \(column) IS NULL OR (\(same)) THEN \(column) ELSE \(call) END"
    }

    /// Throws the first refused value since the last check.
    func check() throws {
        guard let failure else { return }
        self.failure = nil
        throw BridgeError.unmirrorable("a value cannot be mirrored: \(failure)")
    }
}

extension SyncEngine {
    /// How `entity`'s rows are copied set-based, nil when they cannot be (see ``SetInserts``); memoized.
    func setCopy(_ entity: String) throws -> SetInserts.Copy? {
        if let known = setCopies[entity] { return known }
        let copy = makeSetCopy(entity)
        setCopies[entity] = .some(copy)
        return copy
    }

    private func makeSetCopy(_ entity: String) -> SetInserts.Copy? {
        let model = new.model
        // Entity names reach the statements as literals: only plain identifiers do.
        guard SQLIdentifier.isPlain(entity), SQLIdentifier.isPlain(identities.root(of: entity)),
            let definition = model.entity(named: entity), !definition.isAbstract, unique.constraints[entity] == nil,
            let target = new.schema.entities[entity], let source = legacy.schema?.entities[entity],
            case .uuidAttribute(let identityName) = target.identity,
            let identityAttribute = model.allAttributes(of: definition).first(where: { $0.name == identityName }),
            case .attribute(let identityColumn)? = source.properties[identityName]
        else { return nil }
        var copy = SetInserts.Copy(
            entity: entity,
            root: identities.root(of: entity),
            legacyTable: source.table,
            number: source.number,
            newTable: target.table,
            kind: target.hasKindColumn ? entity : nil,
            identity: conversions.expression(entity, identityAttribute, "s." + SQLIdentifier.quoted(identityColumn)),
            columns: [],
            foreignKeys: []
        )
        for attribute in model.allAttributes(of: definition) where !attribute.isTransient {
            switch (target.properties[attribute.name], source.properties[attribute.name]) {
            case (.identity?, _): continue
            case (.column(let column, _)?, .attribute(let legacyColumn)?):
                let expression = conversions.expression(entity, attribute, "s." + SQLIdentifier.quoted(legacyColumn))
                copy.columns.append((column, expression))
                copy.attributes[attribute.name] = (column, expression)
            default: return nil
            }
        }
        for relationship in model.allRelationships(of: definition) where !relationship.isTransient {
            switch (target.properties[relationship.name], source.properties[relationship.name]) {
            case (.toOne(let column, nil)?, .toOne(let legacyColumn, _, nil)?):
                let root = identities.root(of: relationship.destination)
                guard SQLIdentifier.isPlain(root), let table = new.schema.entities[root]?.table else { return nil }
                copy.columns.append(
                    (
                        column,
                        "(SELECT i.id FROM coexist_identity i WHERE i.entity = '\(root)' AND i.pk = s.\(SQLIdentifier.quoted(legacyColumn)))"
                    )
                )
                copy.foreignKeys.append((legacyColumn, root, table))
            case (.inverse?, .inverseForeignKey?): continue
            default: return nil
            }
        }
        return copy
    }
}
