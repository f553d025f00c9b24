public import CoexistSQLite

/// One row of `Z_PRIMARYKEY`: an entity's number, name, parent and key high-water mark (§2.1).
public struct PrimaryKeyRow: Sendable, Hashable, Codable {
    /// `Z_ENT`: the entity number.
    public var number: Int
    /// `Z_NAME`: the entity name (`CHANGE`, `TRANSACTION`, `TRANSACTIONSTRING` for history).
    public var name: String
    /// `Z_SUPER`: the parent entity's number, 0 for a root.
    public var superNumber: Int
    /// `Z_MAX`: the highest `Z_PK` allocated in the root's table (0 on sub-entity rows).
    public var max: Int64

    /// Creates a row.
    public init(number: Int, name: String, superNumber: Int, max: Int64) {
        self.number = number
        self.name = name
        self.superNumber = superNumber
        self.max = max
    }

    /// Entity numbers Core Data reserves for its history tables (§4.7).
    public static let historyNumbers: ClosedRange<Int> = 16001...16003
}

/// Reading `Z_PRIMARYKEY`.
public enum PrimaryKeyTable {
    /// Every row, by entity number.
    public static func read(_ connection: Connection) throws(LegacyStoreError) -> [PrimaryKeyRow] {
        let rows: [[SQLiteValue]]
        do {
            rows = try connection.rows("SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT")
        } catch {
            throw .sqlite(error)
        }
        var result: [PrimaryKeyRow] = []
        for row in rows {
            guard let number = row[0].integerValue, let name = row[1].textValue else {
                throw .invalidData(path: connection.path, detail: "Z_PRIMARYKEY has a row without Z_ENT or Z_NAME")
            }
            result.append(
                PrimaryKeyRow(
                    number: Int(number),
                    name: name,
                    superNumber: Int(row[2].integerValue ?? 0),
                    max: row[3].integerValue ?? 0
                )
            )
        }
        return result
    }
}
