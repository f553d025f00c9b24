import CoexistModel
import CoexistSQLite
import CoexistSaving

/// Relationship changes in the new schema, both sides kept: foreign keys, join tables, positions.
extension NewSave {
    /// Positions are spaced so that appends rarely renumber.
    static let positionStep = OrderedUpkeep.step

    /// Sets the to-one `name` of `ref` to `target` (nil to clear), updating the inverse side.
    public func setToOne(_ ref: ObjectRef, _ name: String, _ target: ObjectRef?) throws {
        try atomically { try setToOneNow(ref, name, target) }
    }

    func setToOneNow(_ ref: ObjectRef, _ name: String, _ target: ObjectRef?) throws {
        let (entity, _) = try resolve(ref)
        try checkExists(ref)
        let relationship = try self.relationship(name, of: entity, ref)
        guard !relationship.isToMany else {
            throw StoreError.validation(path: store.path, detail: "\(ref): \(name) is not a to-one relationship")
        }
        if let target { try checkDestination(target, of: relationship, ref) }
        let inverse = model.inverse(of: relationship)
        try ToOneUpkeep.set(
            ref,
            name,
            from: try currentToOne(ref, name),
            to: target,
            inverse: inverse,
            partner: { target in try inverse.flatMap { try currentToOne(target, $0.name) } },
            write: writeToOne,
            touch: touch
        )
    }

    /// Adds `targets` to the to-many `name` of `ref` (appended when ordered).
    public func add(_ ref: ObjectRef, to name: String, _ targets: [ObjectRef]) throws {
        try atomically { try addNow(ref, to: name, targets) }
    }

    func addNow(_ ref: ObjectRef, to name: String, _ targets: [ObjectRef]) throws {
        let (entity, mapping) = try resolve(ref)
        try checkExists(ref)
        let relationship = try self.relationship(name, of: entity, ref)
        guard relationship.isToMany else {
            throw StoreError.validation(path: store.path, detail: "\(ref): \(name) is not a to-many relationship")
        }
        for target in targets {
            try checkDestination(target, of: relationship, ref)
            switch mapping.properties[name] {
            case .inverse(let inverse):
                try setToOneNow(target, inverse, ref)
            case .join(let table, let selfColumn, let otherColumn, let position):
                try insertJoinRow(table, selfColumn, otherColumn, position, ref, target, relationship)
            default:
                throw StoreError.mismatch(path: store.path, detail: "\(ref.entity).\(name) is not stored as a to-many")
            }
        }
    }

    /// Removes `targets` from the to-many `name` of `ref`.
    public func remove(_ ref: ObjectRef, from name: String, _ targets: [ObjectRef]) throws {
        try atomically { try removeNow(ref, from: name, targets) }
    }

    func removeNow(_ ref: ObjectRef, from name: String, _ targets: [ObjectRef]) throws {
        let (entity, mapping) = try resolve(ref)
        try checkExists(ref)
        let relationship = try self.relationship(name, of: entity, ref)
        let inverse = model.inverse(of: relationship)
        for target in targets {
            try checkDestination(target, of: relationship, ref)
            switch mapping.properties[name] {
            case .inverse(let inverseName):
                if try currentToOne(target, inverseName) == ref { try setToOneNow(target, inverseName, nil) }
            case .join(let table, let selfColumn, let otherColumn, _):
                let reflexive = inverse?.name == relationship.name && relationship.destination == entity.name
                var sql =
                    "DELETE FROM \(SQLIdentifier.quoted(table)) WHERE (\(SQLIdentifier.quoted(selfColumn)) = ?1 AND \(SQLIdentifier.quoted(otherColumn)) = ?2)"
                if reflexive {
                    sql +=
                        " OR (\(SQLIdentifier.quoted(selfColumn)) = ?2 AND \(SQLIdentifier.quoted(otherColumn)) = ?1)"
                }
                try connection.run(sql, [.text(ref.id), .text(target.id)])
                if connection.changes > 0 {
                    touch(ref, name)
                    if let inverse { touch(target, inverse.name) }
                }
            default:
                throw StoreError.mismatch(path: store.path, detail: "\(ref.entity).\(name) is not stored as a to-many")
            }
        }
    }

    /// Makes the ordered to-many `name` of `ref` hold exactly `targets`, in that order.
    public func setOrdered(_ ref: ObjectRef, _ name: String, _ targets: [ObjectRef]) throws {
        try atomically { try setOrderedNow(ref, name, targets) }
    }

    func setOrderedNow(_ ref: ObjectRef, _ name: String, _ targets: [ObjectRef]) throws {
        let (_, mapping) = try resolve(ref)
        try OrderedUpkeep.set(
            targets,
            current: try store.related(ref, name),
            remove: { try removeNow(ref, from: name, $0) },
            add: { try addNow(ref, to: name, $0) },
            position: { target, position in try writePosition(ref, name, target, position, mapping) },
            touch: { touch(ref, name) }
        )
    }

    /// Writes the position of `target` in the ordered to-many `name` of `ref`.
    private func writePosition(
        _ ref: ObjectRef,
        _ name: String,
        _ target: ObjectRef,
        _ position: Int64,
        _ mapping: NewSchema.EntityMapping
    ) throws {
        switch mapping.properties[name] {
        case .inverse(let inverse):
            let (_, targetMapping) = try resolve(target)
            if case .toOne(_, let column?) = targetMapping.properties[inverse] {
                try connection.run(
                    "UPDATE \(SQLIdentifier.quoted(targetMapping.table)) SET \(SQLIdentifier.quoted(column)) = ? WHERE \"id\" = ?",
                    [.integer(position), .text(target.id)]
                )
                touch(target, inverse)
            }
        case .join(let table, let selfColumn, let otherColumn, let column?):
            try connection.run(
                "UPDATE \(SQLIdentifier.quoted(table)) SET \(SQLIdentifier.quoted(column)) = ? WHERE \(SQLIdentifier.quoted(selfColumn)) = ? AND \(SQLIdentifier.quoted(otherColumn)) = ?",
                [.integer(position), .text(ref.id), .text(target.id)]
            )
        default: break
        }
    }

    // MARK: Helpers

    func relationship(_ name: String, of entity: Entity, _ ref: ObjectRef) throws -> Relationship {
        guard let relationship = model.allRelationships(of: entity).first(where: { $0.name == name && !$0.isTransient })
        else {
            throw StoreError.validation(
                path: store.path,
                detail: "\(ref): entity \(entity.name) has no relationship \(name)"
            )
        }
        return relationship
    }

    func checkDestination(_ target: ObjectRef, of relationship: Relationship, _ ref: ObjectRef) throws {
        guard let targetEntity = model.entity(named: target.entity),
            model.ancestry(of: targetEntity).contains(where: { $0.name == relationship.destination })
        else {
            throw StoreError.validation(
                path: store.path,
                detail: "\(ref): \(relationship.name) takes \(relationship.destination) objects, not \(target.entity)"
            )
        }
        try checkExists(target)
    }

    /// The object the to-one `name` of `ref` points to.
    func currentToOne(_ ref: ObjectRef, _ name: String) throws -> ObjectRef? {
        let (entity, mapping) = try resolve(ref)
        guard case .toOne(let column, _) = mapping.properties[name],
            let relationship = model.allRelationships(of: entity).first(where: { $0.name == name }),
            let destination = model.entity(named: relationship.destination)
        else { throw StoreError.mismatch(path: store.path, detail: "\(ref.entity).\(name) is not a to-one") }
        let value = try connection.scalar(
            "SELECT \(SQLIdentifier.quoted(column)) FROM \(SQLIdentifier.quoted(mapping.table)) WHERE \"id\" = ?",
            [.text(ref.id)]
        )
        guard let id = value.textValue else { return nil }
        let concrete = try store.entityOfRow(id: id, rootEntity: model.root(of: destination).name) ?? destination.name
        return ObjectRef(entity: concrete, id: id)
    }

    /// Writes a to-one's column (and its position when the inverse is ordered).
    func writeToOne(_ ref: ObjectRef, _ name: String, _ target: ObjectRef?) throws {
        let (_, mapping) = try resolve(ref)
        guard case .toOne(let column, let position) = mapping.properties[name] else {
            throw StoreError.mismatch(path: store.path, detail: "\(ref.entity).\(name) is not a to-one")
        }
        try noteBefore(ref, [name])
        var assignments = ["\(SQLIdentifier.quoted(column)) = ?"]
        var arguments: [SQLiteValue] = [target.map { .text($0.id) } ?? .null]
        if let position {
            assignments.append("\(SQLIdentifier.quoted(position)) = ?")
            if let target {
                let last = try connection.scalar(
                    "SELECT max(\(SQLIdentifier.quoted(position))) FROM \(SQLIdentifier.quoted(mapping.table)) WHERE \(SQLIdentifier.quoted(column)) = ?",
                    [.text(target.id)]
                )
                arguments.append(.integer((last.integerValue ?? 0) + Self.positionStep))
            } else {
                arguments.append(.null)
            }
        }
        try connection.run(
            "UPDATE \(SQLIdentifier.quoted(mapping.table)) SET \(assignments.joined(separator: ", ")) WHERE \"id\" = ?",
            arguments + [.text(ref.id)]
        )
    }

    private func insertJoinRow(
        _ table: String,
        _ selfColumn: String,
        _ otherColumn: String,
        _ position: String?,
        _ ref: ObjectRef,
        _ target: ObjectRef,
        _ relationship: Relationship
    ) throws {
        let quoted = SQLIdentifier.quoted
        let exists = try connection.scalar(
            "SELECT 1 FROM \(quoted(table)) WHERE \(quoted(selfColumn)) = ? AND \(quoted(otherColumn)) = ?",
            [.text(ref.id), .text(target.id)]
        )
        guard exists == .null else { return }
        var columns = [selfColumn, otherColumn]
        var values: [SQLiteValue] = [.text(ref.id), .text(target.id)]
        let inverse = model.inverse(of: relationship)
        var positions: [(column: String, key: String, owner: String)] =
            position.map { [($0, selfColumn, ref.id)] } ?? []
        if let inverse, let (_, targetMapping) = try? resolve(target),
            case .join(_, let inverseSelf, _, let inversePosition?) = targetMapping.properties[inverse.name],
            inversePosition != position
        {
            positions.append((inversePosition, inverseSelf, target.id))
        }
        for (column, key, owner) in positions {
            let last = try connection.scalar(
                "SELECT max(\(quoted(column))) FROM \(quoted(table)) WHERE \(quoted(key)) = ?",
                [.text(owner)]
            )
            columns.append(column)
            values.append(.integer((last.integerValue ?? 0) + Self.positionStep))
        }
        try connection.run(
            "INSERT INTO \(quoted(table)) (\(columns.map(quoted).joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))",
            values
        )
        let reflexive = inverse?.name == relationship.name && relationship.destination == ref.entity
        if reflexive && ref != target {
            try connection.run(
                "INSERT OR IGNORE INTO \(quoted(table)) (\(quoted(selfColumn)), \(quoted(otherColumn))) VALUES (?, ?)",
                [.text(target.id), .text(ref.id)]
            )
        }
        touch(ref, relationship.name)
        if let inverse { touch(target, inverse.name) }
    }
}
