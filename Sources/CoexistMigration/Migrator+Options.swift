import CoexistHistory
import CoexistLegacyStore
public import CoexistModel
import CoexistSQLite
import CoexistStore
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

extension Migrator {
    /// What to do.
    public struct Options: Sendable {
        /// The version to reach; nil: the `.xcdatamodeld`'s current one.
        public var target: String?
        /// Plan and check on a scratch copy; the store is left as it is.
        public var dryRun: Bool
        /// The compiled model's `VersionInfo.plist`, whose hashes go to `Z_METADATA`; nil: the hashes are removed.
        public var versionInfo: VersionInfo?
        /// The new schema's overrides (identity attributes), as the daemon's configuration gives them.
        public var overrides: SchemaOverrides
        /// After which step to fail (the test hook); nil: never.
        public var failAfterStep: Int?
        /// Custom stages, by step: for steps whose mapping names a policy, or that Core Data could not infer.
        public var stages: [MigrationStage]
        /// Declared transforms of steps (the configuration's `[migration FROM -> TO]` sections).
        public var transforms: [StepTransform]
        /// Refuse every step that is not inferred (a mapping model, a stage): coexistd's `auto-migrate`.
        public var lightweightOnly = false
        /// The caller already holds the file's serving lock (the coexistd serving it, migrating on request).
        public var servingLockHeld = false
        /// Told what the run is doing (`backup`, each step, the final checks) and the share of steps done
        /// (0…1): for a progress line.
        public var progress: (@Sendable (String, Double) -> Void)?
        /// The mapping models shipped for steps, by step (`"Moody 2→Moody 3"`): see
        /// ``Migrator/mappingModels(beside:versions:)``.
        public var mappingModels: [String: String]

        /// Creates options.
        public init(
            target: String? = nil,
            dryRun: Bool = false,
            versionInfo: VersionInfo? = nil,
            overrides: SchemaOverrides = SchemaOverrides(),
            failAfterStep: Int? = nil,
            mappingModels: [String: String] = [:],
            stages: [MigrationStage] = [],
            transforms: [StepTransform] = []
        ) {
            self.transforms = transforms
            self.stages = stages
            self.mappingModels = mappingModels
            self.target = target
            self.dryRun = dryRun
            self.versionInfo = versionInfo
            self.overrides = overrides
            self.failAfterStep = failAfterStep
        }
    }

    /// What a run did (or, dry, would do).
    public struct Report: Sendable, Encodable {
        /// One version step.
        public struct Step: Sendable, Encodable {
            public var from: String
            public var to: String
            /// `inferred (lightweight)` or `mapping model PATH`.
            public var how: String
            /// What changes, in words.
            public var changes: [String]
            /// The statements, per part of the file (`legacy`, `new schema`, `bridge`).
            public var parts: [Part]
        }

        /// The statements of one part.
        public struct Part: Sendable, Encodable {
            public var part: String
            public var statements: [String]
        }

        public var store: String
        public var from: String
        public var to: String
        public var dryRun: Bool
        /// The backup's path (nil for a dry run and a store already at the target).
        public var backup: String?
        public var steps: [Step]
        /// The store-level statements after the steps: `Z_METADATA`, `Z_MODELCACHE`, `coexist_model`.
        public var finish: [String]
        /// What the operator should know (hashes removed for want of a `VersionInfo.plist`).
        public var warnings: [String]
    }
}
