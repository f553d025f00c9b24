import CoexistModel

/// The SQL both formats' planners build alike, differing only in how a table's key is named (`Z_PK` on the
/// Core Data side, `"id"` on the new side): key paths through to-ones as nested lookups, and join-table copies
/// that keep only the rows whose two ends are still there.
struct RowCopySQL {
    /// A table's key column, as SQL (`Z_PK`, `"id"`).
    let key: String
    /// The step's source model (key paths walk it).
    let source: Model
    /// Builds the error of a change that cannot be carried out.
    let unsupported: (String) -> MigrationError

    /// Where a table of the source version waits while the destination's is filled.
    static func aside(_ table: String) -> String { ("coexist_old_" + table).quotedIdentifier }

    /// How one property of a source entity is stored, as a key path sees it.
    enum Stored {
        /// In a column: an attribute's value, or a to-one's key.
        case column(String, isToOne: Bool)
        /// Not in a column of the entity's table (a to-many).
        case elsewhere
    }

    /// The SQL of key path `path` from the source row `s` of `origin` (its tables set aside): the first
    /// component a column of `s`, each further one a lookup in the table the previous to-one names (rows keep
    /// their keys). `stored` says, for an entity and a property, the entity's table and the property's storage.
    func keyPath(
        _ path: [String],
        from origin: Entity,
        for entity: Entity,
        stored: (Entity, String) -> (table: String, storage: Stored)?
    ) throws -> String {
        var current = origin
        var sql = ""
        for (index, component) in path.enumerated() {
            guard let (table, storage) = stored(current, component) else {
                throw unsupported("\(entity.name): \(current.name).\(component) is not stored in the source")
            }
            guard case .column(let column, let isToOne) = storage else {
                throw unsupported("\(entity.name): \(current.name).\(component) is a to-many in a key path")
            }
            sql =
                index == 0
                ? "s." + column.quotedIdentifier
                : "(SELECT t\(index).\(column.quotedIdentifier) FROM \(Self.aside(table)) AS t\(index) "
                    + "WHERE t\(index).\(key) = \(sql))"
            guard index < path.count - 1 else { break }
            guard isToOne,
                let relationship = source.allRelationships(of: current).first(where: { $0.name == component }),
                let next = source.entity(named: relationship.destination)
            else { throw unsupported("\(entity.name): \(current.name).\(component) is not a to-one") }
            current = next
        }
        return sql
    }

    /// The rows of one destination join table, from one source join table.
    struct JoinCopy {
        var oldTable: String
        /// Destination column → source column.
        var columns: [String: String] = [:]
        /// Source column → the destination table of the row it names.
        var ends: [String: String] = [:]
    }

    /// Adds the columns of one relationship's join table to `copies` (keyed by destination table).
    func add(
        to copies: inout [String: JoinCopy],
        table: String,
        from oldTable: String,
        columns: [(new: String, old: String, target: String?)]
    ) throws {
        var copy = copies[table] ?? JoinCopy(oldTable: oldTable)
        guard copy.oldTable == oldTable else {
            throw unsupported("join table \(table) would come from both \(copy.oldTable) and \(oldTable)")
        }
        for column in columns {
            copy.columns[column.new] = column.old
            if let target = column.target { copy.ends[column.old] = target }
        }
        copies[table] = copy
    }

    /// One `INSERT OR IGNORE … SELECT` per join table, keeping the rows whose ends both exist.
    func statements(_ copies: [String: JoinCopy]) -> [MigrationStatement] {
        copies.sorted(by: { $0.key < $1.key }).map { table, copy in
            let pairs = copy.columns.sorted(by: { $0.key < $1.key })
            let conditions = copy.ends.sorted(by: { $0.key < $1.key }).map { column, target in
                "EXISTS (SELECT 1 FROM \(target.quotedIdentifier) AS d WHERE d.\(key) = j.\(column.quotedIdentifier))"
            }
            return MigrationStatement(
                "INSERT OR IGNORE INTO \(table.quotedIdentifier) (\(pairs.map(\.key.quotedIdentifier).joined(separator: ", "))) "
                    + "SELECT \(pairs.map { "j." + $0.value.quotedIdentifier }.joined(separator: ", ")) "
                    + "FROM \(Self.aside(copy.oldTable)) AS j WHERE \(conditions.joined(separator: " AND "))"
            )
        }
    }
}

extension StepMapping {
    /// The source relationship a destination to-many of `entity` is copied from (a plain property mapping).
    func joinOrigin(
        of relationship: Relationship,
        in entity: Entity,
        from origin: Entity,
        source: Model
    )
        -> Relationship?
    {
        let fill = fills.first { $0.destination.name == entity.name && $0.source.name == origin.name }
        guard case .property(let name)? = fill?.relationships[relationship.name] else { return nil }
        return source.allRelationships(of: origin).first { $0.name == name }
    }
}
