public import CoexistModel
import CoexistSQLite

/// The Core Data layout of one model version, as ``StoreCreator`` makes it: the entity and join tables with
/// their indexes, the entity numbers, the tombstone columns the history needs, and where every property
/// lives (resolved the way the readers resolve a store, in a scratch in-memory database).
///
/// A migration's target: the tables a migrated store must end up with are exactly these.
public struct PlannedLayout: Sendable {
    /// `CREATE TABLE` then `CREATE INDEX` statements for the entities' tables and join tables.
    public let statements: [String]
    /// `Z_ENT` of every entity.
    public let numbers: [String: Int]
    /// `Z_PRIMARYKEY` rows of the entities (`Z_MAX` 0), by number.
    public let primaryKeys: [PrimaryKeyRow]
    /// How many `ZTOMBSTONEn` columns `ACHANGE` needs.
    public let tombstoneCount: Int
    /// Where every property lives.
    public let schema: StoreSchema

    /// Plans the layout of `model` for a store of framework version `frameworkVersion`.
    public init(model: Model, frameworkVersion: Int = StoreCreator.Options().frameworkVersion) throws(LegacyStoreError)
    {
        let layout = LegacyTableLayout(model: model, frameworkVersion: frameworkVersion)
        numbers = layout.numbers
        tombstoneCount = layout.tombstoneCount()
        primaryKeys = model.entities.map { entity in
            PrimaryKeyRow(
                number: layout.numbers[entity.name] ?? 0,
                name: entity.name,
                superNumber: entity.superentity.flatMap { layout.numbers[$0] } ?? 0,
                max: 0
            )
        }
        .sorted { $0.number < $1.number }
        do {
            statements = try layout.statements()
            let scratch = try Connection(
                path: ":memory:",
                options: OpenOptions(access: .readWriteCreate, walMode: false, coreDataTriggerFunctions: false)
            )
            for statement in statements { try scratch.execute(statement) }
            let tables = try StoreSchema.readTables(scratch)
            schema = try StoreSchema.resolve(
                model: model,
                primaryKeys: primaryKeys,
                tables: tables,
                path: "the layout of \(model.source)"
            )
        } catch let error as LegacyStoreError {
            throw error
        } catch let error as SQLiteError {
            throw .sqlite(error)
        } catch {
            throw .sqlite(SQLiteError(extendedCode: 1, message: "\(error)", path: ":memory:"))
        }
    }
}
