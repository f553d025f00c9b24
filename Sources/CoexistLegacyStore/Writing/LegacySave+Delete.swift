import CoexistHistory
import CoexistModel
import CoexistSQLite
import CoexistSaving

/// Deleting objects with Core Data's delete rules (cascade, nullify, deny, no action).
extension LegacySave {
    /// Deletes `id` and, through cascade rules, the objects it owns.
    ///
    /// First the whole set of objects to delete is computed and every Deny rule checked: a Deny
    /// relationship that still holds an object outside that set (and outside `alongside`: objects the same
    /// save deletes too, whatever their order) fails the save, naming both objects. Then,
    /// for each deleted object: its preserved attributes are kept for the history tombstone, nullify rules
    /// clear the inverse side of the objects that stay, its join-table rows go, and its row is deleted.
    ///
    /// With `applyingRules` false (the bridge mirroring a delete the other side already resolved) only this
    /// object is deleted and every object pointing to it is nullified: cascades and Deny were applied where
    /// the delete happened, and each cascaded delete arrives as its own change.
    public func delete(
        _ id: ObjectID,
        expectedVersion: Int64? = nil,
        applyingRules: Bool = true,
        alongside: Set<ObjectID> = []
    ) throws {
        try atomically {
            try deleteNow(id, expectedVersion: expectedVersion, applyingRules: applyingRules, alongside: alongside)
        }
    }

    func deleteNow(
        _ id: ObjectID,
        expectedVersion: Int64? = nil,
        applyingRules: Bool = true,
        alongside: Set<ObjectID> = []
    ) throws {
        let (_, mapping) = try resolve(id)
        try checkVersion(id, mapping: mapping, expected: expectedVersion)
        try Deletion.run(
            id,
            model: model,
            applyingRules: applyingRules,
            alongside: alongside,
            entity: { try resolve($0).0 },
            related: { try store.related($0, $1) },
            refusal: { LegacyStoreError.validation(path: store.path, detail: $0) },
            deleteOne: { try deleteOne($0, leaving: $1, applyingRules: applyingRules) }
        )
    }

    private func deleteOne(_ id: ObjectID, leaving doomed: Set<ObjectID>, applyingRules: Bool = true) throws {
        let (entity, mapping) = try resolve(id)
        if pending[id]?.type != .insert { _ = try checkVersion(id, mapping: mapping, expected: nil) }
        var tombstone: [SQLiteValue] = []
        var tombstoneValues: [String: AttributeValue] = [:]
        for attribute in TombstoneLayout(entity: entity, model: model).attributes {
            guard case .attribute(let column) = mapping.properties[attribute.name] else {
                tombstone.append(.null)
                continue
            }
            let value = try connection.scalar(
                "SELECT \(SQLIdentifier.quoted(column)) FROM \(SQLIdentifier.quoted(mapping.table)) WHERE Z_PK = ?",
                [.integer(id.pk)]
            )
            tombstone.append(value)
            tombstoneValues[attribute.name] =
                (try? AttributeCodec.decode(value, as: attribute)) ?? StoreChangeDecoder.untyped(value)
        }
        for relationship in model.allRelationships(of: entity) where !relationship.isTransient {
            let inverse = model.inverse(of: relationship)
            let keepsRow = relationship.deleteRule != .noAction || !applyingRules
            switch mapping.properties[relationship.name] {
            case .inverseForeignKey(let inverseName):
                for target in try store.related(id, relationship.name) where !doomed.contains(target) && keepsRow {
                    try writeToOne(target, inverseName, nil)
                    try touch(target, inverseName)
                }
            case .toOne:
                guard let inverse else { continue }
                for target in try store.related(id, relationship.name) where !doomed.contains(target) && keepsRow {
                    if !inverse.isToMany { try writeToOne(target, inverse.name, nil) }
                    try touch(target, inverse.name)
                }
            case .joinTable(let table, let source, let destination, _):
                for target in try store.related(id, relationship.name) where !doomed.contains(target) {
                    if let inverse { try touch(target, inverse.name) }
                }
                var sql = "DELETE FROM \(SQLIdentifier.quoted(table)) WHERE \(SQLIdentifier.quoted(source)) = ?1"
                if destination == "REFLEXIVE" { sql += " OR REFLEXIVE = ?1" }
                try connection.run(sql, [.integer(id.pk)])
            case .hiddenForeignKey(let table, let column):
                if keepsRow {
                    try connection.run(
                        "UPDATE \(SQLIdentifier.quoted(table)) SET \(SQLIdentifier.quoted(column)) = NULL WHERE \(SQLIdentifier.quoted(column)) = ?",
                        [.integer(id.pk)]
                    )
                }
            case .unresolved(let reason):
                throw LegacyStoreError.modelMismatch(
                    path: store.path,
                    detail:
                        "cannot delete \(id): relationship \(relationship.name) has no storage in this store (\(reason))"
                )
            case .attribute, nil:
                continue
            }
        }
        try connection.run("DELETE FROM \(SQLIdentifier.quoted(mapping.table)) WHERE Z_PK = ?", [.integer(id.pk)])
        ledger.recordDeletion(id, tombstone: Tombstone(stored: tombstone, values: tombstoneValues))
        setVersion(id, nil)
        setBumped(id, false)
    }
}
