public import CoexistSQLite

/// Allocates `Z_PK` values from `Z_PRIMARYKEY.Z_MAX` inside one write transaction (§2.1).
///
/// The first key asked for an entity reads `Z_MAX` (and, defensively, the largest key already in its table);
/// later keys are counted in memory; ``flush()`` writes the new maxima before the transaction commits. Keys
/// are never reused: the write lock is held from the first read to the commit.
public final class KeyAllocator {
    private let connection: Connection
    private var next: [Int: Int64] = [:]

    /// An allocator over `connection`.
    public init(connection: Connection) { self.connection = connection }

    /// The next key for entity `number` (a root entity, or 16001–16003), whose rows live in `table`.
    public func allocate(entity number: Int, table: String) throws -> Int64 {
        let key = try peek(entity: number, table: table)
        next[number] = try successor(of: key, table: table)
        return key
    }

    /// The largest key this allocator hands out or takes: far below `Int64.max`, so that a store whose
    /// maximum was set near it by a hostile import still allocates by refusing, never by trapping.
    public static let largestKey: Int64 = 1 << 62

    /// Takes `key` itself for entity `number` (an imported transaction keeps its token); later keys come
    /// after it. Throws when a key at or after `key` was already handed out (tokens only grow).
    public func take(_ key: Int64, entity number: Int, table: String) throws {
        let free = try peek(entity: number, table: table)
        guard key >= free else {
            throw SQLiteError(
                extendedCode: 1,
                message: "\(table) already has keys up to \(free - 1): key \(key) is taken",
                path: connection.path
            )
        }
        next[number] = try successor(of: key, table: table)
    }

    /// Claims `key` for a row of entity `number` (a replayed object keeps its `Z_PK`): any key no row of
    /// `table` holds, below the high-water mark too; later keys come after the highest claimed.
    public func claim(_ key: Int64, entity number: Int, table: String) throws {
        let free = try peek(entity: number, table: table)
        guard key > 0,
            try connection.scalar("SELECT 1 FROM \(SQLIdentifier.quoted(table)) WHERE Z_PK = ?", [.integer(key)])
                == .null
        else {
            throw SQLiteError(
                extendedCode: 1,
                message: "\(table) already has a row with Z_PK \(key)",
                path: connection.path
            )
        }
        next[number] = max(free, try successor(of: key, table: table))
    }

    private func successor(of key: Int64, table: String) throws -> Int64 {
        guard key >= 0, key < Self.largestKey else {
            throw SQLiteError(
                extendedCode: 1,
                message: "\(table): key \(key) is out of range (at most \(Self.largestKey - 1))",
                path: connection.path
            )
        }
        return key + 1
    }

    /// The next free key, without taking it.
    private func peek(entity number: Int, table: String) throws -> Int64 {
        if let key = next[number] { return key }
        let rows = try connection.rows("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?", [.integer(Int64(number))])
        guard let recorded = rows.first?.first else {
            throw SQLiteError(
                extendedCode: 1,
                message: "Z_PRIMARYKEY has no row for entity \(number)",
                path: connection.path
            )
        }
        let present = try connection.scalar("SELECT max(Z_PK) FROM \(SQLIdentifier.quoted(table))")
        let key = try successor(of: max(recorded.integerValue ?? 0, present.integerValue ?? 0), table: table)
        next[number] = key
        return key
    }

    /// The allocator's state, to restore when an operation is rolled back to a savepoint.
    public var snapshot: [Int: Int64] { next }

    /// Restores a ``snapshot``: keys handed out since are free again (their rows were rolled back).
    public func restore(_ snapshot: [Int: Int64]) { next = snapshot }

    /// Writes every entity's new `Z_MAX`.
    public func flush() throws {
        for (number, nextKey) in next.sorted(by: { $0.key < $1.key }) {
            try connection.run(
                "UPDATE Z_PRIMARYKEY SET Z_MAX = max(coalesce(Z_MAX, 0), ?) WHERE Z_ENT = ?",
                [.integer(nextKey - 1), .integer(Int64(number))]
            )
        }
        next.removeAll()
    }
}
