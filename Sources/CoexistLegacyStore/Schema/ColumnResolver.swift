import CoexistModel

/// Finds the columns and join tables of one root entity's properties in a store's schema (§1.1, §1.4).
///
/// Column names are `Z` + the property name in upper case; when sibling sub-entities declare properties
/// with the same name, the declarers sorted by entity number get `Z<NAME>`, `Z<NAME>1`, `Z<NAME>2`, ….
/// Every name is checked against the table's real columns; what cannot be found is reported as
/// ``PropertyStorage/unresolved(reason:)`` rather than guessed.
struct ColumnResolver {
    let model: Model
    let numbers: [String: Int]
    let tables: [String: [String]]
    let root: Entity
    let columns: Set<String>

    func properties(of entity: Entity) -> [String: PropertyStorage] {
        var result: [String: PropertyStorage] = [:]
        for attribute in model.allAttributes(of: entity) where !attribute.isTransient {
            let owner = declarer(of: attribute.name, in: entity)
            let found =
                column(for: attribute.name, declaredBy: owner)
                ?? attribute.renamingIdentifier.flatMap { column(for: $0, declaredBy: owner) }
            result[attribute.name] =
                found.map { .attribute(column: $0) } ?? .unresolved(reason: "no column Z\(attribute.name.uppercased())")
        }
        for relationship in model.allRelationships(of: entity) where !relationship.isTransient {
            result[relationship.name] = storage(of: relationship, in: entity)
        }
        return result
    }

    private func storage(of relationship: Relationship, in entity: Entity) -> PropertyStorage {
        let upper = relationship.name.uppercased()
        let inverse = model.inverse(of: relationship)
        if !relationship.isToMany {
            let owner = declarer(of: relationship.name, in: entity)
            guard
                let column = column(for: relationship.name, declaredBy: owner)
                    ?? relationship.renamingIdentifier.flatMap({ column(for: $0, declaredBy: owner) })
            else {
                return .unresolved(reason: "no column Z\(upper)")
            }
            var entityColumn: String?
            if let destination = model.entity(named: relationship.destination),
                !model.subentities(of: destination).isEmpty,
                let rootNumber = numbers[model.root(of: destination).name]
            {
                let name = "Z\(rootNumber)_\(upper)"
                guard columns.contains(name) else { return .unresolved(reason: "no column \(name)") }
                entityColumn = name
            }
            let orderName = "Z_FOK_\(upper)"
            let orderColumn = (inverse?.isOrdered ?? false) && columns.contains(orderName) ? orderName : nil
            return .toOne(column: column, entityColumn: entityColumn, orderColumn: orderColumn)
        }
        if let inverse, !inverse.isToMany { return .inverseForeignKey(inverse: inverse.name) }
        guard let destination = model.entity(named: relationship.destination) else {
            return .unresolved(reason: "destination \(relationship.destination) does not exist")
        }
        let sourceNumbers = model.ancestry(of: declarer(of: relationship.name, in: entity)).compactMap {
            numbers[$0.name]
        }
        guard let inverse else {
            // No inverse: Core Data keeps a hidden foreign key `Z<N><NAME>` in the destination's table.
            let table = "Z" + model.root(of: destination).name.uppercased()
            let candidates = sourceNumbers.map { "Z\($0)\(upper)" }
            guard let column = candidates.first(where: { tables[table]?.contains($0) ?? false }) else {
                return .unresolved(reason: "no column \(candidates.joined(separator: " or ")) in \(table)")
            }
            return .hiddenForeignKey(table: table, column: column)
        }
        let destinationNumbers = model.ancestry(of: destination).compactMap { numbers[$0.name] }
        let inverseUpper = inverse.name.uppercased()
        let candidates =
            sourceNumbers.map { "Z_\($0)\(upper)" } + destinationNumbers.map { "Z_\($0)\(inverseUpper)" }
        guard let table = candidates.first(where: { tables[$0] != nil }), let tableColumns = tables[table] else {
            return .unresolved(reason: "no join table among \(candidates.joined(separator: ", "))")
        }
        let keyColumns = tableColumns.filter { !$0.hasPrefix("Z_FOK_") }
        if inverse.name == relationship.name && destination.name == entity.name || keyColumns.contains("REFLEXIVE") {
            guard keyColumns.count == 2, let first = keyColumns.first(where: { $0 != "REFLEXIVE" }) else {
                return .unresolved(reason: "reflexive join table \(table) lacks the expected key columns")
            }
            return .joinTable(table: table, sourceColumn: first, destinationColumn: "REFLEXIVE", orderColumn: nil)
        }
        let source = Self.match(sourceNumbers.map { "Z_\($0)\(inverseUpper)" }, in: keyColumns)
        let target = Self.match(destinationNumbers.map { "Z_\($0)\(upper)" }, in: keyColumns.filter { $0 != source })
        guard let source, let target else {
            return .unresolved(reason: "join table \(table) lacks the expected key columns")
        }
        let orderName = "Z_FOK_" + target.dropFirst(2)
        let order = relationship.isOrdered && tableColumns.contains(orderName) ? orderName : nil
        return .joinTable(table: table, sourceColumn: source, destinationColumn: target, orderColumn: order)
    }

    /// The first column equal to a candidate, else the first that is a candidate plus a collision suffix.
    static func match(_ candidates: [String], in columns: [String]) -> String? {
        if let exact = candidates.first(where: { columns.contains($0) }) { return exact }
        for candidate in candidates {
            if let suffixed = columns.first(where: { column in
                column.hasPrefix(candidate) && column.count > candidate.count
                    && column.dropFirst(candidate.count).allSatisfy(\.isNumber)
            }) {
                return suffixed
            }
        }
        return nil
    }

    /// The entity in `entity`'s ancestry that declares the property `name`.
    private func declarer(of name: String, in entity: Entity) -> Entity {
        model.ancestry(of: entity).first { candidate in
            candidate.attribute(named: name) != nil || candidate.relationship(named: name) != nil
        } ?? entity
    }

    /// The column of property `name` declared by `declarer`, with the collision suffix rule.
    private func column(for name: String, declaredBy declarer: Entity) -> String? {
        let base = "Z" + name.uppercased()
        let declarers = model.hierarchy(from: root).filter { candidate in
            let stored =
                candidate.attributes.contains { $0.name == name && !$0.isTransient }
                || candidate.relationships.contains { $0.name == name && !$0.isTransient && !$0.isToMany }
            return stored
        }
        .sorted { (numbers[$0.name] ?? 0) < (numbers[$1.name] ?? 0) }
        let position = declarers.firstIndex { $0.name == declarer.name } ?? 0
        let name = position == 0 ? base : base + String(position)
        return columns.contains(name) ? name : nil
    }
}
