public import CoexistModel
public import CoexistSQLite
import FoundationEssentials

/// The model versions a store's history was written under: one record per step `coexistctl migrate` made
/// (`coexist_migration`), each with the version's model, its entity numbers, its learnt slot orders, and how
/// the step renumbered the history's `ZENTITY`, so that every `ACHANGE` row decodes with the model it was
/// written under.
///
/// A migration renumbers the history's entities the way it renumbers the tables (a row of a kept entity
/// takes the entity's new number: filters and counts by entity stay right), and a removed entity's rows take
/// ``removedNumber(_:migration:)``, negative, which no entity has and which names the migration and the old
/// number. A row's version is the first record whose `lastToken` is at or after its token.
public struct HistoryEra: Sendable, Hashable {
    /// The record's id: migrations in order.
    public var id: Int64
    /// The version the history up to ``lastToken`` was written under.
    public var fromVersion: String
    /// The version the step moved to.
    public var toVersion: String
    /// The last token written under ``fromVersion``.
    public var lastToken: Int64
    /// ``fromVersion``'s model.
    public var model: Model
    /// `Z_ENT` of every entity under ``fromVersion``.
    public var numbers: [String: Int]
    /// What the step did to kept entities' `ZENTITY`: old number → new number.
    public var renumbering: [Int: Int]
    /// The one-to-many slot orders learnt under ``fromVersion`` (entity → relationships in slot order).
    public var slotOrders: [String: [String]]

    /// Creates a record.
    public init(
        id: Int64,
        fromVersion: String,
        toVersion: String,
        lastToken: Int64,
        model: Model,
        numbers: [String: Int],
        renumbering: [Int: Int],
        slotOrders: [String: [String]]
    ) {
        self.id = id
        self.fromVersion = fromVersion
        self.toVersion = toVersion
        self.lastToken = lastToken
        self.model = model
        self.numbers = numbers
        self.renumbering = renumbering
        self.slotOrders = slotOrders
    }
}

/// Reading and writing ``HistoryEra`` records.
public enum HistoryEras {
    /// The records' table.
    public static let table = "coexist_migration"

    static let createSQL = """
        CREATE TABLE IF NOT EXISTS coexist_migration (
            id INTEGER PRIMARY KEY,
            migrated_at REAL NOT NULL,
            from_version TEXT NOT NULL,
            to_version TEXT NOT NULL,
            last_token INTEGER NOT NULL,
            model TEXT NOT NULL,
            entity_numbers TEXT NOT NULL,
            renumbering TEXT NOT NULL,
            slot_orders TEXT NOT NULL
        ) STRICT
        """

    /// The `ZENTITY` a removed entity's history rows take at migration `id`.
    public static func removedNumber(_ number: Int, migration id: Int64) -> Int { -(Int(id) * 100_000 + number) }

    /// The id the next record will have.
    public static func nextID(_ connection: Connection) throws -> Int64 {
        guard try connection.tableExists(table) else { return 1 }
        return (try connection.scalar("SELECT ifnull(max(id), 0) + 1 FROM coexist_migration").integerValue) ?? 1
    }

    /// The statements that record `era` (creating the table when absent), at time `now` (seconds since 2001).
    public static func recordStatements(
        _ era: HistoryEra,
        now: Double
    ) throws -> [(
        sql: String, arguments: [SQLiteValue]
    )] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        func json<T: Encodable>(_ value: T) throws -> SQLiteValue {
            .text(String(decoding: try encoder.encode(value), as: UTF8.self))
        }
        let renumbering = Dictionary(uniqueKeysWithValues: era.renumbering.map { (String($0.key), $0.value) })
        return [
            (createSQL, []),
            (
                "INSERT INTO coexist_migration (id, migrated_at, from_version, to_version, last_token, model, "
                    + "entity_numbers, renumbering, slot_orders) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    .integer(era.id), .real(now), .text(era.fromVersion), .text(era.toVersion), .integer(era.lastToken),
                    try json(era.model), try json(era.numbers), try json(renumbering), try json(era.slotOrders),
                ]
            ),
        ]
    }

    /// Every record, in order; none when the store was never migrated.
    public static func read(_ connection: Connection) throws -> [HistoryEra] {
        guard try connection.tableExists(table) else { return [] }
        let rows = try connection.rows(
            "SELECT id, from_version, to_version, last_token, model, entity_numbers, renumbering, slot_orders "
                + "FROM coexist_migration ORDER BY id"
        )
        let decoder = JSONDecoder()
        return try rows.map { row in
            func decode<T: Decodable>(_ type: T.Type, _ index: Int) throws -> T {
                try decoder.decode(type, from: Data((row[index].textValue ?? "").utf8))
            }
            let renumbering = try decode([String: Int].self, 6)
            return HistoryEra(
                id: row[0].integerValue ?? 0,
                fromVersion: row[1].textValue ?? "",
                toVersion: row[2].textValue ?? "",
                lastToken: row[3].integerValue ?? 0,
                model: try decode(Model.self, 4),
                numbers: try decode([String: Int].self, 5),
                renumbering: Dictionary(
                    renumbering.compactMap { key, value in Int(key).map { ($0, value) } },
                    uniquingKeysWith: { first, _ in first }
                ),
                slotOrders: try decode([String: [String]].self, 7)
            )
        }
    }

    /// The last token written under an earlier version (0: none): rows after it are the current model's.
    public static func currentEraStart(_ connection: Connection) throws -> Int64 {
        guard try connection.tableExists(table) else { return 0 }
        return try connection.scalar("SELECT ifnull(max(last_token), 0) FROM coexist_migration").integerValue ?? 0
    }

    /// For a row of token `token` whose `ZENTITY` is now `number`: the index in `eras` of the version it was
    /// written under and its entity number then; nil for a row of the current version.
    public static func resolve(number: Int, token: Int64, in eras: [HistoryEra]) -> (era: Int, number: Int)? {
        guard let era = eras.firstIndex(where: { token <= $0.lastToken }) else { return nil }
        var value = number
        var step = eras.count - 1
        if value < 0 {
            // Removed at the migration the number names: that era's own number.
            let code = -value
            guard let removedAt = eras.firstIndex(where: { Int($0.id) == code / 100_000 }), removedAt >= era else {
                return (era, value)
            }
            value = code % 100_000
            step = removedAt - 1
        }
        while step >= era {
            let inverse = eras[step].renumbering.first { $0.value == value }?.key
            value = inverse ?? value
            step -= 1
        }
        return (era, value)
    }
}
