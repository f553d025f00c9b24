import CoexistHistory
import CoexistModel
import CoexistSQLite

/// The values a save records with its changes (`coexist_change.vals`), read back from the tables inside the
/// save's own transaction: exactly what it committed, whichever way the rows were written (one by one, or a
/// set-based copy noted with ``NewSave/noteInserted(_:)``).
extension NewSave {
    /// A value longer than this (bytes of a binary, transformable or external value, or of a string) is not
    /// copied into the history: the change records no values then, and its event reads them from the tables
    /// (saying from which token when that is later).
    static let largestRecordedValue = 4_096

    /// What each insert (every attribute and relationship) and update (the changed ones) of `refs` set:
    /// a query per table and chunk of 512 objects, and per to-many and chunk. Best effort: an object whose
    /// row does not decode records nothing (its event reads the tables), and never fails the save.
    func recordedValues(_ refs: [ObjectRef]) throws -> [ObjectRef: RecordedValues] {
        var wanted: [ObjectRef: Set<String>?] = [:]
        for ref in refs {
            switch pending[ref]?.type {
            case .insert?: wanted[ref] = .some(nil)
            case .update?: wanted[ref] = .some(Set(pending[ref]?.properties ?? []))
            default: continue
            }
        }
        guard !wanted.isEmpty || refs.contains(where: { pending[$0]?.type == .delete && before[$0] != nil }) else {
            return [:]
        }
        var recorded: [ObjectRef: RecordedValues] = [:]
        var unrecorded: Set<ObjectRef> = []
        try store.forEachRow(of: Array(wanted.keys)) { ref, row in
            guard let names = wanted[ref] else { return }
            guard let values = try decoded(ref, row, names) else {
                unrecorded.insert(ref)
                return
            }
            var entry = RecordedValues(values: values)
            if pending[ref]?.type == .update, let known = before[ref] {
                let changed = known.filter { names?.contains($0.key) ?? true }
                if !changed.isEmpty { entry.before = changed }
            }
            recorded[ref] = entry
        }
        for ref in unrecorded { recorded[ref] = nil }
        try recordToManys(wanted, into: &recorded)
        // An object this save changed, then deleted: its tombstone is what it held at the delete, not before.
        for ref in refs where pending[ref]?.type == .delete {
            if let known = before[ref], !known.isEmpty { recorded[ref] = RecordedValues(before: known) }
        }
        return recorded
    }

    /// The attributes and to-ones (their targets' identities) of `row` (the row of `ref`) named in `names`
    /// (all when nil); nil when one does not decode or is too large to record, unless `omittingLarge`: then a
    /// large one is left out.
    private func decoded(
        _ ref: ObjectRef,
        _ row: Row,
        _ names: Set<String>?,
        omittingLarge: Bool = false
    ) throws -> [String: AttributeValue]? {
        let layout = try store.recordingLayouts[ref.entity] ?? recordingLayout(ref.entity, row)
        store.recordingLayouts[ref.entity] = layout
        var values: [String: AttributeValue] = [:]
        do {
            for (index, name) in layout.decoder.attributeNames.enumerated() where names?.contains(name) ?? true {
                let value = try layout.decoder.attribute(at: index, of: row, id: ref.id)
                if Self.isLarge(value) {
                    if omittingLarge { continue }
                    return nil
                }
                values[name] = value
            }
        } catch {
            return nil
        }
        for (name, position) in layout.toOnes where names?.contains(name) ?? true {
            values[name] = row[position].textValue.map { .string($0) } ?? .null
        }
        return values
    }

    /// Notes what `names` of `ref` hold before this save writes them (an update's `before`), for those the
    /// save has not changed yet: read from the row once per save, before its first write of a noted name.
    /// Nothing for objects this save inserted, nor when the save records no values (``recordsValues`` is
    /// meant to be set before the save's first write). A to-one read null after a delete of this save is not
    /// noted: SQLite may have cleared it (`ON DELETE SET NULL`) without the save's knowledge. A value too
    /// large to record is not noted either.
    func noteBefore(_ ref: ObjectRef, _ names: [String]) throws {
        guard recordsValues, pending[ref]?.type != .insert, !deleted.contains(ref) else { return }
        let changed = Set(pending[ref]?.properties ?? [])
        let fresh = names.filter { before[ref]?[$0] == nil && !changed.contains($0) }
        guard !fresh.isEmpty else { return }
        if storedRows[ref] == nil {
            var found: [String: AttributeValue]?
            try store.forEachRow(of: [ref]) { ref, row in found = try decoded(ref, row, nil, omittingLarge: true) }
            storedRows[ref] = .some(found.map { StoredRow(values: $0, toOnesAsStored: deleted.isEmpty) })
        }
        guard let stored = storedRows[ref] ?? nil else { return }
        let (entity, _) = try resolve(ref)
        let toOnes = Set(model.allRelationships(of: entity).filter { !$0.isToMany }.map(\.name))
        for name in fresh {
            // SQLite only ever clears a to-one: one read after a delete is known unless it reads null.
            guard let value = stored.values[name], stored.toOnesAsStored || !toOnes.contains(name) || value != .null
            else { continue }
            before[ref, default: [:]][name] = value
        }
    }

    /// A row as ``noteBefore(_:_:)`` read it.
    struct StoredRow {
        var values: [String: AttributeValue]
        /// Read before any delete of the save: its to-ones are what the save started with.
        var toOnesAsStored: Bool
    }

    private static func isLarge(_ value: AttributeValue) -> Bool {
        switch value {
        case .binary(let bytes), .transformable(let bytes), .externalReference(let bytes):
            bytes.count > largestRecordedValue
        case .string(let text), .uri(let text): text.utf8.count > largestRecordedValue
        default: false
        }
    }

    /// How the rows of `entity` that ``NewStore/forEachRow(of:_:)`` reads (`row` is one) decode: its
    /// attributes, and its to-ones' key columns.
    private func recordingLayout(_ entity: String, _ row: Row) throws -> RecordingLayout {
        let (_, mapping) = try resolve(ObjectRef(entity: entity, id: ""))
        var positions: [String: Int] = [:]
        for index in 0..<row.count where positions[row.name(index)] == nil { positions[row.name(index)] = index }
        let toOnes = mapping.properties.sorted { $0.key < $1.key }.compactMap { name, storage -> (String, Int)? in
            guard case .toOne(let column, _) = storage, let position = positions[column] else { return nil }
            return (name, position)
        }
        return RecordingLayout(decoder: try store.rowDecoder(for: entity, columnsOf: row), toOnes: toOnes)
    }

    /// Adds the wanted to-manys' members (by entity, relationship and chunk of owners).
    private func recordToManys(
        _ wanted: [ObjectRef: Set<String>?],
        into recorded: inout [ObjectRef: RecordedValues]
    )
        throws
    {
        var owners: [String: [ObjectRef]] = [:]
        for ref in wanted.keys where recorded[ref] != nil { owners[ref.entity, default: []].append(ref) }
        for (entityName, refs) in owners.sorted(by: { $0.key < $1.key }) {
            let (entity, _) = try resolve(ObjectRef(entity: entityName, id: ""))
            for relationship in model.allRelationships(of: entity)
            where relationship.isToMany && !relationship.isTransient {
                let holders = refs.filter { wanted[$0]??.contains(relationship.name) ?? true }
                guard !holders.isEmpty else { continue }
                // Counted first: a large to-many (a parent whose children are added one save at a time) is
                // recorded as its count without reading its members.
                let counts = try store.relatedCounts(holders, relationship.name)
                let listed = holders.filter { counts[$0, default: 0] <= RecordedValues.maxListedMembers }
                let members = try store.related(listed, relationship.name)
                for ref in holders {
                    if let count = counts[ref], count > RecordedValues.maxListedMembers {
                        recorded[ref]?.counts[relationship.name] = count
                    } else {
                        recorded[ref]?.members[relationship.name] = (members[ref] ?? []).map(\.id)
                    }
                }
            }
        }
    }
}

/// How a save reads back one entity's rows to record their values: the attributes' decoder, and the
/// to-ones' key columns by position.
struct RecordingLayout {
    var decoder: RowDecoder
    var toOnes: [(name: String, position: Int)]
}
