import CoexistModel
import CoexistSQLite
import CoexistSaving

/// Deleting with delete rules in the new schema.
extension NewSave {
    /// Deletes `ref` and, through cascade rules, what it owns; Deny relationships that still hold objects
    /// outside the deleted set (and outside `alongside`: objects the same save deletes too, whatever their
    /// order) fail the operation, naming both objects.
    ///
    /// With `applyingRules` false (the bridge mirroring a delete resolved on the other side) only this object
    /// is deleted and every reference to it is nullified.
    public func delete(_ ref: ObjectRef, applyingRules: Bool = true, alongside: Set<ObjectRef> = []) throws {
        try atomically { try deleteNow(ref, applyingRules: applyingRules, alongside: alongside) }
    }

    /// In two phases: every object of the deleted set is read (its tombstone), detached from its partners
    /// outside the set and recorded, in the rules' order; then the set's references to one another are cleared
    /// and the rows deleted. Deleted one by one, an owner's row would make the schema's `ON DELETE` actions
    /// (CASCADE, RESTRICT for Deny) act on rows of the set before their own delete read them.
    func deleteNow(_ ref: ObjectRef, applyingRules: Bool = true, alongside: Set<ObjectRef> = []) throws {
        try checkExists(ref)
        var detached: [ObjectRef] = []
        try Deletion.run(
            ref,
            model: model,
            applyingRules: applyingRules,
            alongside: alongside,
            entity: { try resolve($0).0 },
            related: { try store.related($0, $1) },
            refusal: { StoreError.validation(path: store.path, detail: $0) },
            deleteOne: { member, doomed in
                try detach(member, leaving: doomed)
                detached.append(member)
            }
        )
        for member in detached { try clearToOnes(member) }
        for member in detached {
            let (_, mapping) = try resolve(member)
            try connection.run(
                "DELETE FROM \(SQLIdentifier.quoted(mapping.table)) WHERE \"id\" = ?",
                [.text(member.id)]
            )
        }
    }

    /// Sets the to-one columns of `ref`'s row to NULL (it is about to be deleted with what they reference).
    private func clearToOnes(_ ref: ObjectRef) throws {
        let (_, mapping) = try resolve(ref)
        var assignments: [String] = []
        for storage in mapping.properties.values {
            guard case .toOne(let column, let position) = storage else { continue }
            assignments.append("\(SQLIdentifier.quoted(column)) = NULL")
            if let position { assignments.append("\(SQLIdentifier.quoted(position)) = NULL") }
        }
        guard !assignments.isEmpty else { return }
        try connection.run(
            "UPDATE \(SQLIdentifier.quoted(mapping.table)) SET \(assignments.sorted().joined(separator: ", ")) WHERE \"id\" = ?",
            [.text(ref.id)]
        )
    }

    /// Reads `ref`'s tombstone, detaches it from its partners outside `doomed` and records its delete; its row
    /// stays until ``deleteNow(_:applyingRules:alongside:)``'s second phase.
    private func detach(_ ref: ObjectRef, leaving doomed: Set<ObjectRef>) throws {
        let (entity, mapping) = try resolve(ref)
        var tombstone: [String: AttributeValue] = [:]
        let preserved = model.allAttributes(of: entity).filter {
            $0.preservesValueInHistoryOnDeletion && !$0.isTransient
        }
        if !preserved.isEmpty, let values = try store.values(of: ref) {
            for attribute in preserved { tombstone[attribute.name] = values[attribute.name] ?? .null }
        }
        for relationship in model.allRelationships(of: entity) where !relationship.isTransient {
            let inverse = model.inverse(of: relationship)
            let targets = try store.related(ref, relationship.name).filter { !doomed.contains($0) }
            switch mapping.properties[relationship.name] {
            case .toOne:
                guard let inverse else { continue }
                for target in targets {
                    if !inverse.isToMany { try writeToOne(target, inverse.name, nil) }
                    touch(target, inverse.name)
                }
            case .inverse(let inverseName):
                for target in targets {
                    try writeToOne(target, inverseName, nil)
                    touch(target, inverseName)
                }
            case .join(let table, let selfColumn, let otherColumn, _):
                if let inverse { for target in targets { touch(target, inverse.name) } }
                try connection.run(
                    "DELETE FROM \(SQLIdentifier.quoted(table)) WHERE \(SQLIdentifier.quoted(selfColumn)) = ?1 OR (\(SQLIdentifier.quoted(otherColumn)) = ?1 AND ?2)",
                    [.text(ref.id), .integer(inverse?.name == relationship.name ? 1 : 0)]
                )
            default:
                throw StoreError.mismatch(
                    path: store.path,
                    detail: "cannot delete \(ref): \(relationship.name) has no storage"
                )
            }
        }
        ledger.recordDeletion(ref, tombstone: tombstone)
    }
}
