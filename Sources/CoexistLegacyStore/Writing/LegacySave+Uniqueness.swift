import CoexistModel
import CoexistSQLite

extension LegacySave {
    /// Fails when the object's values for any uniqueness constraint of its entity (or an ancestor) equal
    /// another object's. `values` are the stored values being written, by column; other columns are read.
    func checkUniqueness(_ id: ObjectID, entity: Entity, mapping: EntityMapping, values: [String: SQLiteValue]) throws {
        for owner in model.ancestry(of: entity) {
            for constraint in owner.uniquenessConstraints where !constraint.isEmpty {
                let columns = constraint.compactMap { property -> String? in
                    switch mapping.properties[property] {
                    case .attribute(let column): column
                    case .toOne(let column, _, _): column
                    default: nil
                    }
                }
                guard columns.count == constraint.count, columns.contains(where: { values[$0] != nil }) else {
                    continue
                }
                var current: [SQLiteValue] = []
                for column in columns {
                    if let value = values[column] {
                        current.append(value)
                    } else {
                        current.append(
                            try connection.scalar(
                                "SELECT \(SQLIdentifier.quoted(column)) FROM \(SQLIdentifier.quoted(mapping.table)) WHERE Z_PK = ?",
                                [.integer(id.pk)]
                            )
                        )
                    }
                }
                if current.contains(where: \.isNull) { continue }
                let members = model.hierarchy(from: owner).compactMap { schema.entities[$0.name]?.number }
                let sql =
                    "SELECT Z_PK, Z_ENT FROM \(SQLIdentifier.quoted(mapping.table)) WHERE Z_PK != ? AND Z_ENT IN ("
                    + members.map(String.init).joined(separator: ", ") + ") AND "
                    + columns.map { "\(SQLIdentifier.quoted($0)) = ?" }.joined(separator: " AND ") + " LIMIT 1"
                if let clash = try connection.rows(sql, [.integer(id.pk)] + current).first {
                    let other = schema.entity(number: Int(clash[1].integerValue ?? 0))?.name ?? owner.name
                    throw LegacyStoreError.validation(
                        path: store.path,
                        detail: "\(id): uniqueness constraint (\(constraint.joined(separator: ", "))) of \(owner.name) "
                            + "is already held by \(other)/p\(clash[0].integerValue ?? 0)"
                    )
                }
            }
        }
    }
}
