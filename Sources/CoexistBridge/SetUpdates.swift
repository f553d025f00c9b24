import CoexistLegacyStore
import CoexistSQLite
import CoexistStore

/// The legacy updates of a snapshot written set-based, for the objects whose updated properties are all
/// stored attributes of an entity ``SetInserts`` can copy: per concrete entity, one query compares the
/// winning properties of every object with the new row (the legacy value converted as the copy converts it,
/// compared byte for byte), then one `UPDATE … FROM` per set of properties that differ writes them; the save
/// records each object's update naming exactly those, as the object path does. An object either side does
/// not hold as expected (no identity, no row, parked, deleted since) is left to the object path.
struct SetUpdates {
    let engine: SyncEngine

    /// Writes what it can of `updates` (legacy objects the snapshot updated, with their winning properties);
    /// returns the objects handled (written, or found equal already).
    func update(_ updates: [(id: ObjectID, properties: [String])], save: NewSave) throws -> Set<ObjectID> {
        guard engine.derived.names.isEmpty, !updates.isEmpty else { return [] }
        var byEntity: [String: [(pk: Int64, properties: [String])]] = [:]
        for (id, properties) in updates where !properties.isEmpty {
            byEntity[id.entity, default: []].append((id.pk, properties))
        }
        var handled: Set<ObjectID> = []
        for (entity, rows) in byEntity.sorted(by: { $0.key < $1.key }) {
            guard let copy = try engine.setCopy(entity) else { continue }
            let eligible = rows.filter { $0.properties.allSatisfy { copy.attributes[$0] != nil } }
            guard !eligible.isEmpty else { continue }
            var names: [String] = []
            for row in eligible { for name in row.properties where !names.contains(name) { names.append(name) } }
            var groups: [[String]: [(pk: Int64, id: String)]] = [:]
            for difference in try differences(copy, eligible, names) {
                handled.insert(ObjectID(entity: entity, pk: difference.pk))
                if !difference.changed.isEmpty {
                    groups[difference.changed, default: []].append((difference.pk, difference.id))
                }
            }
            for (properties, objects) in groups.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
                try write(copy, properties, objects)
                try save.noteUpdated(objects.map { (ObjectRef(entity: entity, id: $0.id), properties) })
                engine.updatedInPass += objects.count
            }
        }
        return handled
    }

    /// For each object both sides hold as expected, its identity and which of its properties differ (sorted).
    private func differences(
        _ copy: SetInserts.Copy,
        _ rows: [(pk: Int64, properties: [String])],
        _ names: [String]
    ) throws -> [(pk: Int64, id: String, changed: [String])] {
        let comparisons = names.compactMap { name in
            copy.attributes[name].map {
                "(\($0.expression)) IS NOT n.\(SQLIdentifier.quoted($0.column)) COLLATE BINARY"
            }
        }
        let kind = copy.kind.map { "AND n.\"kind\" = '\($0)' " } ?? ""
        // The keys drive the joins (CROSS JOIN keeps them outermost: the planner otherwise scans every identity
        // of the entity, once per key).
        let found = try engine.connection.rows(
            """
            WITH c AS MATERIALIZED (
                SELECT j.value AS pk, i.id AS id FROM json_each(?1) j
                CROSS JOIN coexist_identity i ON i.entity = ?2 AND i.pk = j.value
            )
            SELECT c.pk, c.id, \(comparisons.joined(separator: ", ")) FROM c
            JOIN \(SQLIdentifier.quoted(copy.legacyTable)) s ON s.Z_PK = c.pk AND s.Z_ENT = ?3
            JOIN \(SQLIdentifier.quoted(copy.newTable)) n ON n."id" = c.id \(kind)
            WHERE NOT EXISTS (SELECT 1 FROM coexist_parked_object p WHERE p.side = 'legacy' AND p.entity = ?2 AND p.pk = c.pk)
            ORDER BY c.pk
            """,
            [.text(SetInserts.list(rows.map(\.pk))), .text(copy.root), .integer(Int64(copy.number))]
        )
        try engine.conversions.check()
        let wanted = Dictionary(rows.map { ($0.pk, Set($0.properties)) }, uniquingKeysWith: { $0.union($1) })
        return found.compactMap { row in
            guard let pk = row[0].integerValue, let id = row[1].textValue, let properties = wanted[pk] else {
                return nil
            }
            let changed = names.indices.filter { row[2 + $0].integerValue == 1 && properties.contains(names[$0]) }
            return (pk, id, changed.map { names[$0] }.sorted())
        }
    }

    /// Writes `properties` of `objects` (legacy keys with their identities) from the legacy rows.
    private func write(_ copy: SetInserts.Copy, _ properties: [String], _ objects: [(pk: Int64, id: String)]) throws {
        let assignments = properties.compactMap { name in
            copy.attributes[name].map { "\(SQLIdentifier.quoted($0.column)) = \($0.expression)" }
        }
        try engine.connection.run(
            "UPDATE \(SQLIdentifier.quoted(copy.newTable)) AS n SET \(assignments.joined(separator: ", ")) "
                + "FROM json_each(?) j CROSS JOIN \(SQLIdentifier.quoted(copy.legacyTable)) s ON s.Z_PK = j.value ->> 0 "
                + "WHERE n.\"id\" = j.value ->> 1",
            [.text(SetInserts.json(objects))]
        )
        try engine.conversions.check()
    }
}
