public import CoexistHistory
import CoexistModel
import CoexistSQLite

/// What `coexistctl inspect` reports about a store: identity, model, entities with row counts,
/// relationships and their storage, and a history summary.
public struct StoreReport: Sendable, Encodable {
    /// One entity: number, parent, table and the rows whose `Z_ENT` is this entity's number.
    public struct EntityReport: Sendable, Encodable, Equatable {
        public var name: String
        public var number: Int
        public var parent: String?
        public var table: String?
        public var rows: Int
        public var maxPK: Int64
    }

    /// One relationship and how it is stored.
    public struct RelationshipReport: Sendable, Codable, Equatable {
        public var entity: String
        public var name: String
        public var destination: String
        public var toMany: Bool
        public var ordered: Bool
        public var inverse: String?
        public var deleteRule: String
        public var storage: String
        public var joinTable: String?
    }

    public var path: String
    public var storeUUID: String
    public var storeType: String?
    public var frameworkVersion: Int?
    public var modelVersionIdentifiers: [String]
    public var modelSource: String
    public var walMode: Bool
    public var entities: [EntityReport]
    public var relationships: [RelationshipReport]
    /// Nil when the store has no history tables.
    public var history: HistorySummary?

    /// Builds the report for an open store.
    public init(store: LegacyStore) throws(LegacyStoreError) {
        path = store.path
        storeUUID = store.metadata.storeUUID
        storeType = store.metadata.storeType
        frameworkVersion = store.metadata.frameworkVersion
        modelVersionIdentifiers = store.metadata.modelVersionIdentifiers
        modelSource = store.modelSource.description
        do {
            walMode = try store.connection.scalar("PRAGMA journal_mode").textValue?.lowercased() == "wal"
            entities = try Self.entities(of: store)
            history = store.hasHistory ? try HistorySummary.read(store.connection) : nil
        } catch {
            throw .sqlite(error)
        }
        relationships = Self.relationships(of: store)
    }

    private static func entities(of store: LegacyStore) throws(SQLiteError) -> [EntityReport] {
        let entityRows = store.primaryKeys.filter { !PrimaryKeyRow.historyNumbers.contains($0.number) }
        let byNumber = Dictionary(entityRows.map { ($0.number, $0) }, uniquingKeysWith: { first, _ in first })
        func root(of row: PrimaryKeyRow) -> PrimaryKeyRow {
            var current = row
            var steps = 0
            while current.superNumber != 0, let parent = byNumber[current.superNumber], steps < byNumber.count {
                current = parent
                steps += 1
            }
            return current
        }
        var countsByTable: [String: [Int: Int]] = [:]
        var reports: [EntityReport] = []
        for row in entityRows {
            let rootRow = root(of: row)
            let table = store.schema?.entities[row.name]?.table ?? "Z" + rootRow.name.uppercased()
            let exists = store.tables[table]?.contains("Z_ENT") ?? false
            if exists && countsByTable[table] == nil {
                var counts: [Int: Int] = [:]
                let sql = "SELECT Z_ENT, count(*) FROM \(SQLIdentifier.quoted(table)) GROUP BY Z_ENT"
                for countRow in try store.connection.rows(sql) {
                    counts[Int(countRow[0].integerValue ?? -1)] = Int(countRow[1].integerValue ?? 0)
                }
                countsByTable[table] = counts
            }
            reports.append(
                EntityReport(
                    name: row.name,
                    number: row.number,
                    parent: byNumber[row.superNumber]?.name,
                    table: exists ? table : nil,
                    rows: countsByTable[table]?[row.number] ?? 0,
                    maxPK: rootRow.max
                )
            )
        }
        return reports
    }

    private static func relationships(of store: LegacyStore) -> [RelationshipReport] {
        guard let model = store.model, let schema = store.schema else { return [] }
        var reports: [RelationshipReport] = []
        for entity in model.entities {
            for relationship in entity.relationships where !relationship.isTransient {
                let storage = schema.entities[entity.name]?.properties[relationship.name]
                var joinTable: String?
                if case .joinTable(let table, _, _, _) = storage { joinTable = table }
                reports.append(
                    RelationshipReport(
                        entity: entity.name,
                        name: relationship.name,
                        destination: relationship.destination,
                        toMany: relationship.isToMany,
                        ordered: relationship.isOrdered,
                        inverse: relationship.inverse,
                        deleteRule: relationship.deleteRule.xmlName,
                        storage: storage?.summary ?? "unresolved",
                        joinTable: joinTable
                    )
                )
            }
        }
        return reports
    }
}
