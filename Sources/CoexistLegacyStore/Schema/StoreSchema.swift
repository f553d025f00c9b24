public import CoexistModel
public import CoexistSQLite

/// Where a model's entities live in one store: entity numbers from `Z_PRIMARYKEY`, tables, columns and
/// join tables read from the store's schema — never assumed from names alone (§1).
public struct StoreSchema: Sendable {
    /// Every entity's mapping, by entity name.
    public private(set) var entities: [String: EntityMapping]
    /// Tables in the store, with their columns in declaration order.
    public let tables: [String: [String]]
    /// The entity numbers `Z_PRIMARYKEY` names as another entity's parent (`Z_SUPER`), the model's or not:
    /// their tables hold other entities' rows too.
    public let parentNumbers: Set<Int>

    /// The mapping of the entity numbered `number`.
    public func entity(number: Int) -> EntityMapping? { entities.values.first { $0.number == number } }

    /// Resolves `model` against the store's `Z_PRIMARYKEY` rows and tables.
    ///
    /// Throws ``LegacyStoreError/modelMismatch(path:detail:)`` naming the entity when an entity has no
    /// `Z_PRIMARYKEY` row, its root table is missing, or its parent differs from the store's.
    public static func resolve(
        model: Model,
        primaryKeys: [PrimaryKeyRow],
        tables: [String: [String]],
        path: String
    ) throws(LegacyStoreError) -> StoreSchema {
        let rowsByName = Dictionary(primaryKeys.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var numbers: [String: Int] = [:]
        for entity in model.entities {
            guard let row = rowsByName[entity.name] ?? entity.renamingIdentifier.flatMap({ rowsByName[$0] }) else {
                throw .modelMismatch(path: path, detail: "entity \(entity.name) has no Z_PRIMARYKEY row")
            }
            numbers[entity.name] = row.number
        }
        var mappings: [String: EntityMapping] = [:]
        for entity in model.entities {
            let root = model.root(of: entity)
            let table = "Z" + root.name.uppercased()
            guard let columns = tables[table] else {
                throw .modelMismatch(path: path, detail: "entity \(entity.name): table \(table) does not exist")
            }
            let parentNumber = entity.superentity.flatMap { numbers[$0] } ?? 0
            let storeParent =
                numbers[entity.name].flatMap { number in primaryKeys.first { $0.number == number } }?.superNumber ?? 0
            guard parentNumber == storeParent else {
                throw .modelMismatch(
                    path: path,
                    detail:
                        "entity \(entity.name): parent is entity \(parentNumber) in the model, \(storeParent) in the store"
                )
            }
            let resolver = ColumnResolver(
                model: model,
                numbers: numbers,
                tables: tables,
                root: root,
                columns: Set(columns)
            )
            mappings[entity.name] = EntityMapping(
                name: entity.name,
                number: numbers[entity.name] ?? 0,
                superNumber: parentNumber,
                rootName: root.name,
                table: table,
                properties: resolver.properties(of: entity)
            )
        }
        return StoreSchema(entities: mappings, tables: tables, parentNumbers: Set(primaryKeys.map(\.superNumber)))
    }

    /// The store's tables and their columns, from `sqlite_master` and `PRAGMA table_info`.
    public static func readTables(_ connection: Connection) throws(SQLiteError) -> [String: [String]] {
        try connection.schemaDependent("StoreSchema.readTables") { () throws(SQLiteError) in
            try readTablesNow(connection)
        }
    }

    private static func readTablesNow(_ connection: Connection) throws(SQLiteError) -> [String: [String]] {
        var tables: [String: [String]] = [:]
        let names = try connection.rows("SELECT name FROM sqlite_master WHERE type = 'table'").compactMap {
            $0[0].textValue
        }
        for name in names {
            let columns = try connection.rows("SELECT name FROM pragma_table_info(?)", [.text(name)])
            tables[name] = columns.compactMap { $0[0].textValue }
        }
        return tables
    }
}
