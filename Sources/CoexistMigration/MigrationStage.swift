public import CoexistLegacyStore
public import CoexistModel
public import CoexistSQLite
public import CoexistStore

/// A custom stage of a migration, for what neither an inferred mapping nor a mapping model expresses (a
/// mapping model naming a custom entity migration policy, which is code; a change Core Data could not infer),
/// in the spirit of SwiftData's `MigrationStage.custom(fromVersion:toVersion:willMigrate:didMigrate:)`.
///
/// Both closures run inside the migration's one transaction: `willMigrate` on the store at `fromVersion`
/// before the step, `didMigrate` on the store at `toVersion` after the step's tables are rebuilt (a policy's
/// entity mapping is run for what it maps, so `didMigrate` does the policy's own part). They work through the
/// adapters' APIs (``MigrationStageContext/legacyStore()``, ``MigrationStageContext/newStore()``); their saves
/// join the transaction and are recorded in the history, so the bridge mirrors them like any commit. A
/// throw rolls the whole migration back.
public struct MigrationStage: Sendable {
    /// The step's source version (`Moody 5`).
    public var fromVersion: String
    /// The step's destination version (`Moody 6`).
    public var toVersion: String
    /// The custom entity migration policies this stage stands in for, by class name, with or without the
    /// module (`Country5ToCountry6Policy`).
    public var policies: [String]
    /// Runs before the step, on the source version.
    public var willMigrate: (@Sendable (MigrationStageContext) throws -> Void)?
    /// Runs after the step, on the destination version.
    public var didMigrate: (@Sendable (MigrationStageContext) throws -> Void)?

    /// A custom stage for the step `fromVersion` → `toVersion`.
    public static func custom(
        fromVersion: String,
        toVersion: String,
        standingInFor policies: [String] = [],
        willMigrate: (@Sendable (MigrationStageContext) throws -> Void)? = nil,
        didMigrate: (@Sendable (MigrationStageContext) throws -> Void)? = nil
    ) -> MigrationStage {
        MigrationStage(
            fromVersion: fromVersion,
            toVersion: toVersion,
            policies: policies,
            willMigrate: willMigrate,
            didMigrate: didMigrate
        )
    }

    /// Whether this stage stands in for the policy class `name` (`Migrations.Country5ToCountry6Policy`).
    func covers(policy name: String) -> Bool {
        policies.contains { $0 == name || name.hasSuffix("." + $0) }
    }
}

/// What a custom stage works on: the migration's connection (inside its transaction) and the model version
/// the store is at when the closure runs.
public struct MigrationStageContext {
    /// The connection, inside the migration's transaction.
    public let connection: Connection
    /// The version the store is at now.
    public let version: String
    /// Its model.
    public let model: Model
    /// The new schema's overrides.
    public let overrides: SchemaOverrides

    /// The Core Data side, with ``model``.
    public func legacyStore() throws -> LegacyStore { try LegacyStore(connection: connection, model: model) }

    /// The new schema, with ``model``; nil when the file has none yet.
    public func newStore() throws -> NewStore? {
        let store = try NewStore(connection: connection, model: model, overrides: overrides)
        return try store.schemaExists() ? store : nil
    }
}
