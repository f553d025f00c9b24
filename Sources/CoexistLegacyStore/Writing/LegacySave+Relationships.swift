import CoexistHistory
import CoexistModel
import CoexistSQLite
import CoexistSaving

/// Relationship changes, keeping both sides consistent: foreign keys, join tables and `Z_FOK_` order
/// (coredata-sqlite-format.md §1.4). Every object whose relationship changes is recorded as updated.
extension LegacySave {
    /// Order keys are spaced like Core Data's (1024, 2048, …) so that moves rarely renumber.
    static let orderStep = OrderedUpkeep.step

    /// Sets the to-one `name` of `id` to `target` (nil to clear), updating the inverse side.
    public func setToOne(_ id: ObjectID, _ name: String, _ target: ObjectID?) throws {
        try atomically { try setToOneNow(id, name, target) }
    }

    func setToOneNow(_ id: ObjectID, _ name: String, _ target: ObjectID?) throws {
        let (entity, mapping) = try resolve(id)
        try checkVersion(id, mapping: mapping, expected: nil)
        let relationship = try self.relationship(name, of: entity, id)
        guard !relationship.isToMany, case .toOne(let column, _, _) = mapping.properties[name] else {
            throw LegacyStoreError.validation(path: store.path, detail: "\(id): \(name) is not a to-one relationship")
        }
        if let target { try checkDestination(target, of: relationship, id) }
        let inverse = model.inverse(of: relationship)
        try ToOneUpkeep.set(
            id,
            name,
            from: try currentToOne(id, mapping: mapping, column: column, relationship: relationship),
            to: target,
            inverse: inverse,
            partner: { target in
                // A target whose inverse is not stored as a to-one column has no partner to lose.
                guard let inverse, let (_, targetMapping) = try? resolve(target),
                    case .toOne(let inverseColumn, _, _) = targetMapping.properties[inverse.name]
                else { return nil }
                return try currentToOne(target, mapping: targetMapping, column: inverseColumn, relationship: inverse)
            },
            write: writeToOne,
            touch: touch
        )
    }

    /// Adds `targets` to the to-many `name` of `id` (appended at the end when the relationship is ordered).
    public func add(_ id: ObjectID, to name: String, _ targets: [ObjectID]) throws {
        try atomically { try addNow(id, to: name, targets) }
    }

    func addNow(_ id: ObjectID, to name: String, _ targets: [ObjectID]) throws {
        let (entity, mapping) = try resolve(id)
        try checkVersion(id, mapping: mapping, expected: nil)
        let relationship = try self.relationship(name, of: entity, id)
        guard relationship.isToMany else {
            throw LegacyStoreError.validation(path: store.path, detail: "\(id): \(name) is not a to-many relationship")
        }
        for target in targets {
            try checkDestination(target, of: relationship, id)
            switch mapping.properties[name] {
            case .inverseForeignKey(let inverse):
                try setToOne(target, inverse, id)
            case .joinTable(let table, let source, let destination, let order):
                try insertJoinRow(
                    table,
                    source: source,
                    destination: destination,
                    id,
                    target,
                    order: order,
                    relationship
                )
            case .hiddenForeignKey(let table, let column):
                let previous = try connection.scalar(
                    "SELECT \(SQLIdentifier.quoted(column)) FROM \(SQLIdentifier.quoted(table)) WHERE Z_PK = ?",
                    [.integer(target.pk)]
                )
                guard previous.integerValue != id.pk else { continue }
                if let owner = previous.integerValue, let ownerTable = schema.entities[id.entity]?.table {
                    // The target leaves its previous owner, which changes too.
                    let number = try connection.scalar(
                        "SELECT Z_ENT FROM \(SQLIdentifier.quoted(ownerTable)) WHERE Z_PK = ?",
                        [.integer(owner)]
                    )
                    if let number = number.integerValue, let ownerEntity = schema.entity(number: Int(number)) {
                        try touch(ObjectID(entity: ownerEntity.name, pk: owner), name)
                    }
                }
                try connection.run(
                    "UPDATE \(SQLIdentifier.quoted(table)) SET \(SQLIdentifier.quoted(column)) = ? WHERE Z_PK = ?",
                    [.integer(id.pk), .integer(target.pk)]
                )
                try touch(id, name)
            default:
                throw LegacyStoreError.modelMismatch(
                    path: store.path,
                    detail: "\(id.entity).\(name) has no storage in this store"
                )
            }
        }
    }

    /// Removes `targets` from the to-many `name` of `id`.
    public func remove(_ id: ObjectID, from name: String, _ targets: [ObjectID]) throws {
        try atomically { try removeNow(id, from: name, targets) }
    }

    func removeNow(_ id: ObjectID, from name: String, _ targets: [ObjectID]) throws {
        let (entity, mapping) = try resolve(id)
        try checkVersion(id, mapping: mapping, expected: nil)
        let relationship = try self.relationship(name, of: entity, id)
        let inverse = model.inverse(of: relationship)
        for target in targets {
            try checkDestination(target, of: relationship, id)
            switch mapping.properties[name] {
            case .inverseForeignKey(let inverseName):
                let (_, targetMapping) = try resolve(target)
                guard case .toOne(let column, _, _) = targetMapping.properties[inverseName] else { continue }
                if try currentToOne(
                    target,
                    mapping: targetMapping,
                    column: column,
                    relationship: inverse ?? relationship
                ) == id {
                    try setToOne(target, inverseName, nil)
                }
            case .joinTable(let table, let source, let destination, _):
                try connection.run(
                    "DELETE FROM \(SQLIdentifier.quoted(table)) WHERE (\(SQLIdentifier.quoted(source)) = ?1 AND \(SQLIdentifier.quoted(destination)) = ?2)"
                        + (destination == "REFLEXIVE"
                            ? " OR (\(SQLIdentifier.quoted(source)) = ?2 AND REFLEXIVE = ?1)" : ""),
                    [.integer(id.pk), .integer(target.pk)]
                )
                if connection.changes > 0 {
                    try touch(id, name)
                    if let inverse { try touch(target, inverse.name) }
                }
            case .hiddenForeignKey(let table, let column):
                try connection.run(
                    "UPDATE \(SQLIdentifier.quoted(table)) SET \(SQLIdentifier.quoted(column)) = NULL WHERE Z_PK = ? AND \(SQLIdentifier.quoted(column)) = ?",
                    [.integer(target.pk), .integer(id.pk)]
                )
                if connection.changes > 0 { try touch(id, name) }
            default:
                throw LegacyStoreError.modelMismatch(
                    path: store.path,
                    detail: "\(id.entity).\(name) has no storage in this store"
                )
            }
        }
    }

    /// Makes the ordered to-many `name` of `id` hold exactly `targets`, in that order.
    public func setOrdered(_ id: ObjectID, _ name: String, _ targets: [ObjectID]) throws {
        try atomically { try setOrderedNow(id, name, targets) }
    }

    func setOrderedNow(_ id: ObjectID, _ name: String, _ targets: [ObjectID]) throws {
        let (_, mapping) = try resolve(id)
        try OrderedUpkeep.set(
            targets,
            current: try store.related(id, name),
            remove: { try remove(id, from: name, $0) },
            add: { try add(id, to: name, $0) },
            position: { target, key in try writeOrderKey(id, name, target, key, mapping) },
            touch: { try touch(id, name) }
        )
    }

    /// Writes the order key of `target` in the ordered to-many `name` of `id`.
    private func writeOrderKey(
        _ id: ObjectID,
        _ name: String,
        _ target: ObjectID,
        _ key: Int64,
        _ mapping: EntityMapping
    ) throws {
        switch mapping.properties[name] {
        case .inverseForeignKey(let inverse):
            let (_, targetMapping) = try resolve(target)
            if case .toOne(_, _, let order?) = targetMapping.properties[inverse] {
                try connection.run(
                    "UPDATE \(SQLIdentifier.quoted(targetMapping.table)) SET \(SQLIdentifier.quoted(order)) = ? WHERE Z_PK = ?",
                    [.integer(key), .integer(target.pk)]
                )
                try touch(target, inverse)
            }
        case .joinTable(let table, let source, let destination, let order?):
            try connection.run(
                "UPDATE \(SQLIdentifier.quoted(table)) SET \(SQLIdentifier.quoted(order)) = ? WHERE \(SQLIdentifier.quoted(source)) = ? AND \(SQLIdentifier.quoted(destination)) = ?",
                [.integer(key), .integer(id.pk), .integer(target.pk)]
            )
        default: break
        }
    }

    // MARK: Helpers

    func relationship(_ name: String, of entity: Entity, _ id: ObjectID) throws -> Relationship {
        guard let relationship = model.allRelationships(of: entity).first(where: { $0.name == name && !$0.isTransient })
        else {
            throw LegacyStoreError.validation(
                path: store.path,
                detail: "\(id): entity \(entity.name) has no relationship \(name)"
            )
        }
        return relationship
    }

    /// Fails unless `target` exists and is the relationship's destination or one of its sub-entities.
    func checkDestination(_ target: ObjectID, of relationship: Relationship, _ id: ObjectID) throws {
        guard let targetEntity = model.entity(named: target.entity),
            model.ancestry(of: targetEntity).contains(where: { $0.name == relationship.destination })
        else {
            throw LegacyStoreError.validation(
                path: store.path,
                detail: "\(id): \(relationship.name) takes \(relationship.destination) objects, not \(target.entity)"
            )
        }
        let (_, targetMapping) = try resolve(target)
        try checkVersion(target, mapping: targetMapping, expected: nil)
    }

    /// The object a to-one currently points to.
    func currentToOne(
        _ id: ObjectID,
        mapping: EntityMapping,
        column: String,
        relationship: Relationship
    ) throws -> ObjectID? {
        let value = try connection.scalar(
            "SELECT \(SQLIdentifier.quoted(column)) FROM \(SQLIdentifier.quoted(mapping.table)) WHERE Z_PK = ?",
            [.integer(id.pk)]
        )
        guard let key = value.integerValue, let destination = model.entity(named: relationship.destination),
            let destinationTable = schema.entities[destination.name]?.table
        else { return nil }
        let number = try connection.scalar(
            "SELECT Z_ENT FROM \(SQLIdentifier.quoted(destinationTable)) WHERE Z_PK = ?",
            [.integer(key)]
        )
        guard let entityNumber = number.integerValue, let concrete = schema.entity(number: Int(entityNumber)) else {
            return nil
        }
        return ObjectID(entity: concrete.name, pk: key)
    }

    /// Writes the columns of a to-one: key, entity column (polymorphic), order column (ordered inverse).
    func writeToOne(_ id: ObjectID, _ name: String, _ target: ObjectID?) throws {
        let (_, mapping) = try resolve(id)
        guard case .toOne(let column, let entityColumn, let orderColumn) = mapping.properties[name] else {
            throw LegacyStoreError.modelMismatch(
                path: store.path,
                detail: "\(id.entity).\(name) is not stored as a to-one in this store"
            )
        }
        var assignments = ["\(SQLIdentifier.quoted(column)) = ?"]
        var arguments: [SQLiteValue] = [target.map { .integer($0.pk) } ?? .null]
        if let entityColumn {
            assignments.append("\(SQLIdentifier.quoted(entityColumn)) = ?")
            arguments.append(target.flatMap { schema.entities[$0.entity] }.map { .integer(Int64($0.number)) } ?? .null)
        }
        if let orderColumn {
            assignments.append("\(SQLIdentifier.quoted(orderColumn)) = ?")
            if let target {
                let last = try connection.scalar(
                    "SELECT max(\(SQLIdentifier.quoted(orderColumn))) FROM \(SQLIdentifier.quoted(mapping.table)) WHERE \(SQLIdentifier.quoted(column)) = ?",
                    [.integer(target.pk)]
                )
                arguments.append(.integer((last.integerValue ?? 0) + Self.orderStep))
            } else {
                arguments.append(.null)
            }
        }
        try connection.run(
            "UPDATE \(SQLIdentifier.quoted(mapping.table)) SET \(assignments.joined(separator: ", ")) WHERE Z_PK = ?",
            arguments + [.integer(id.pk)]
        )
    }

    private func insertJoinRow(
        _ table: String,
        source: String,
        destination: String,
        _ id: ObjectID,
        _ target: ObjectID,
        order: String?,
        _ relationship: Relationship
    ) throws {
        let quoted = SQLIdentifier.quoted
        var exists = "SELECT 1 FROM \(quoted(table)) WHERE \(quoted(source)) = ?1 AND \(quoted(destination)) = ?2"
        if destination == "REFLEXIVE" { exists += " OR (\(quoted(source)) = ?2 AND REFLEXIVE = ?1)" }
        guard try connection.scalar(exists, [.integer(id.pk), .integer(target.pk)]) == .null else { return }
        var columns = [source, destination]
        var values: [SQLiteValue] = [.integer(id.pk), .integer(target.pk)]
        let inverse = model.inverse(of: relationship)
        var orderColumns: [(column: String, key: String)] = order.map { [($0, source)] } ?? []
        if let inverse, let (_, targetMapping) = try? resolve(target),
            case .joinTable(_, let inverseSource, _, let inverseOrder?) = targetMapping.properties[inverse.name]
        {
            orderColumns.append((inverseOrder, inverseSource))
        }
        for (column, key) in orderColumns {
            let keyValue = key == source ? id.pk : target.pk
            let last = try connection.scalar(
                "SELECT max(\(quoted(column))) FROM \(quoted(table)) WHERE \(quoted(key)) = ?",
                [.integer(keyValue)]
            )
            columns.append(column)
            values.append(.integer((last.integerValue ?? 0) + Self.orderStep))
        }
        try connection.run(
            "INSERT INTO \(quoted(table)) (\(columns.map(quoted).joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))",
            values
        )
        try touch(id, relationship.name)
        if let inverse { try touch(target, inverse.name) }
    }
}
