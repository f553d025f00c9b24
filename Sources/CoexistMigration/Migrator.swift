import CoexistHistory
public import CoexistLegacyStore
public import CoexistModel
import CoexistSQLite
import CoexistStore
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Moves a store from the model version it is at to a later one of its `.xcdatamodeld`, both formats and
/// the bridge's tables together, in ONE SQLite transaction, after a `VACUUM INTO` backup beside the store.
///
/// Order of a run: the file's serving lock (no coexistd may run on it), the checks that need no writing
/// (the store's version, every step inferable, the bridge caught up with nothing parked), `BEGIN IMMEDIATE`,
/// the backup made by a second connection while the write lock is held (so it is exactly the state the
/// migration starts from), then each version step in order — Core Data tables, new schema, identities —
/// each planned against the state the previous one left, then `Z_METADATA`, `Z_MODELCACHE` (emptied: it
/// described the old version), coexist's copy of the model and a `coexist_migration` record per step, then
/// `foreign_key_check` and `integrity_check`, then COMMIT. Any error rolls everything back.
///
/// A dry run does the same on a scratch copy (`VACUUM INTO` a temporary file) and rolls it back: the store
/// is only read.
public enum Migrator {
    /// How one step runs: its mapping (inferred or from a mapping model), and which it is.
    struct Plan: Sendable {
        var mapping: StepMapping
        var how: String
        var stage: MigrationStage?
    }

    /// The test hook: a failure injected after step N (1-based) of a run, to prove the rollback.
    public static let failureHook = "COEXIST_MIGRATION_FAIL_AT"

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

    /// Migrates the store at `path` through `versions` (every version of its `.xcdatamodeld`, in order).
    public static func migrate(
        store path: String,
        versions: [XCDataModelReader.Version],
        options: Options = Options()
    ) throws -> Report {
        // The serving coexistd keeps its own descriptor of the file: opening and closing another one here
        // would drop every POSIX lock the process holds on it (SQLite's included).
        guard !options.servingLockHeld else {
            return try migrateLocked(store: path, versions: versions, options: options)
        }
        let identity = try DatabaseFileIdentity(path: path)
        _ = try identity.header()
        if !options.dryRun { try identity.serveExclusively() }
        // Kept open (and locked) until every connection of the run is closed.
        return try withExtendedLifetime(identity) {
            try migrateLocked(store: path, versions: versions, options: options)
        }
    }

    /// ``migrate(store:versions:options:)`` once the file's lock is held (or not needed: a dry run).
    static func migrateLocked(
        store path: String,
        versions: [XCDataModelReader.Version],
        options: Options
    ) throws -> Report {
        let probe = try Connection(path: path, options: Self.backupOptions)
        let (from, to) = try Self.range(probe, path: path, versions: versions, target: options.target)
        var report = Report(
            store: path,
            from: versions[from].name,
            to: versions[to].name,
            dryRun: options.dryRun,
            backup: nil,
            steps: [],
            finish: [],
            warnings: []
        )
        guard from < to else { return report }
        var plans: [Plan] = []
        for index in from..<to {
            let source = versions[index]
            let destination = versions[index + 1]
            let step = "\(source.name) → \(destination.name)"
            let stage = options.stages.first { $0.fromVersion == source.name && $0.toVersion == destination.name }
            let transform = options.transforms.first { $0.from == source.name && $0.to == destination.name }
            if let transform, options.lightweightOnly {
                throw MigrationError.unsupported(
                    path: path,
                    step: step,
                    detail: "it has a declared transform (\(transform.assignments[0].location)): not lightweight"
                )
            }
            if let file = options.mappingModels[source.name + "→" + destination.name], options.lightweightOnly {
                throw MigrationError.unsupported(
                    path: path,
                    step: step,
                    detail: "it has a mapping model (\(file)): not lightweight"
                )
            }
            if let file = options.mappingModels[source.name + "→" + destination.name] {
                // The app ships a mapping for this step: it is what the step does (inferring would lose it).
                let model = try MappingModelReader.read(path: file)
                let mapping = try StepMapping.mapped(
                    model,
                    from: source.model,
                    to: destination.model,
                    path: path,
                    step: step,
                    stage: stage
                )
                let how = "mapping model \(file)" + (stage == nil ? "" : " and a custom stage")
                var plan = Plan(mapping: mapping, how: how, stage: stage)
                if let transform {
                    try plan.mapping.apply(transform, to: destination.model, path: path, step: step)
                    plan.how += " and a declared transform"
                }
                plans.append(plan)
                continue
            }
            let changes = ModelChanges(from: source.model, to: destination.model)
            // A stage is code and answers for the whole step; a transform only for the properties it sets.
            let uncovered = changes.reasons.filter { reason in
                guard stage == nil || options.lightweightOnly else { return false }
                return !(transform?.assignments ?? []).contains { reason.hasPrefix("\($0.entity).\($0.property) ") }
            }
            guard uncovered.isEmpty else {
                throw MigrationError.notInferable(
                    path: path,
                    from: source.name,
                    to: destination.name,
                    reasons: uncovered
                )
            }
            var plan = Plan(
                mapping: StepMapping.inferred(from: source.model, to: destination.model, changes: changes),
                how: stage == nil ? "inferred (lightweight)" : "inferred, with a custom stage",
                stage: stage
            )
            if let transform {
                try plan.mapping.apply(transform, to: destination.model, path: path, step: step)
                plan.how += " and a declared transform"
            }
            plans.append(plan)
        }
        try Self.checkBridge(probe, path: path)
        if options.versionInfo?.hashes[versions[to].name] == nil {
            report.warnings.append(
                "no compiled VersionInfo.plist with hashes for \(versions[to].name): NSStoreModelVersionHashes removed "
                    + "from Z_METADATA (Core Data will treat the store as an unknown version); pass --momd"
            )
        }
        if options.dryRun {
            let (folder, scratch) = try Self.scratchCopy(probe, of: path)
            defer {
                for suffix in ["", "-wal", "-shm", "-journal"] { unlink(scratch + suffix) }
                rmdir(folder)
            }
            let connection = try Connection(path: scratch, options: Self.migrationOptions)
            try Self.run(connection, versions: versions, from: from, plans: plans, options: options, report: &report)
            return report
        }
        let connection = try Connection(path: path, options: Self.migrationOptions)
        report.backup = try Self.run(
            connection,
            versions: versions,
            from: from,
            plans: plans,
            options: options,
            report: &report,
            backup: { try Self.backup(probe, of: path, version: versions[from].name) }
        )
        return report
    }

    /// Why `configured` (the current version of the `.xcdatamodeld` at `modelPath`) does not fit the store
    /// `store`, in version terms: the store's version, older or newer, and for an older one the exact
    /// `coexistctl migrate` command (`command`: how to name the store and model to it). Nil when the model
    /// is not an `.xcdatamodeld`, the store carries no model, or its model is none of the versions.
    public static func versionMismatch(store: LegacyStore, modelPath: String, command: String) -> String? {
        versionGap(store: store, modelPath: modelPath, command: command)?.message
    }

    /// ``versionMismatch(store:modelPath:command:)`` with whether the store is the older one.
    public static func versionGap(
        store: LegacyStore,
        modelPath: String,
        command: String
    ) -> (older: Bool, message: String)? {
        guard modelPath.hasSuffix(".xcdatamodeld") || modelPath.hasSuffix(".xcdatamodeld/"),
            let storeModel = store.model,
            let versions = try? XCDataModelReader.readVersions(path: modelPath),
            let found = XCDataModelReader.Version.matching(
                storeModel,
                identifiers: store.metadata.modelVersionIdentifiers,
                in: versions
            ),
            let at = versions.firstIndex(where: { $0.name == found.name }),
            let current = versions.firstIndex(where: \.isCurrent), at != current
        else { return nil }
        func named(_ version: XCDataModelReader.Version) -> String {
            let identifiers = version.model.versionIdentifiers.joined(separator: ", ")
            return identifiers.isEmpty ? version.name : "\(version.name) (\(identifiers))"
        }
        let versionsSaid = "\(store.path) is at model version \(named(found)), "
        guard at < current else {
            return (
                false,
                versionsSaid + "newer than the configured \(named(versions[current])): configure the app's newer model"
            )
        }
        return (
            true, versionsSaid + "older than the configured \(named(versions[current])): migrate it first: \(command)"
        )
    }

    /// The compiled model's `VersionInfo.plist` beside an `.xcdatamodeld` (`<name>.momd/VersionInfo.plist`
    /// in the same folder), nil when there is none.
    public static func versionInfo(beside model: String) throws -> VersionInfo? {
        let trimmed = model.hasSuffix("/") ? String(model.dropLast()) : model
        let beside = String(trimmed.dropLast(".xcdatamodeld".count)) + ".momd/VersionInfo.plist"
        guard access(beside, R_OK) == 0 else { return nil }
        return try VersionInfo.read(path: beside)
    }

    /// The mapping models Xcode leaves beside an `.xcdatamodeld` for its steps (`<from>-<to>.xcmappingmodel`
    /// in the same folder), by step (`"<from>→<to>"`).
    public static func mappingModels(beside model: String, versions: [XCDataModelReader.Version]) -> [String: String] {
        let trimmed = model.hasSuffix("/") ? String(model.dropLast()) : model
        let folder = trimmed.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        var result: [String: String] = [:]
        for (from, to) in zip(versions, versions.dropFirst()) {
            let path = (folder.isEmpty ? "." : folder) + "/\(from.name)-\(to.name).xcmappingmodel"
            if access(path, F_OK) == 0 { result[from.name + "→" + to.name] = path }
        }
        return result
    }

    /// The step a mapping model given by path is for (`"<from>→<to>"`): the version names Xcode recorded in it
    /// (`…/Moody 2.xcdatamodel` → `Moody 2`), else its folder's name (`<from>-<to>.xcmappingmodel`), checked
    /// against `versions`. Throws ``MigrationError/badTarget(path:detail:)`` when neither names a step.
    public static func mappingModelStep(_ path: String, versions: [XCDataModelReader.Version]) throws -> String {
        let model = try MappingModelReader.read(path: path)
        func version(_ recorded: String?) -> String? {
            guard let last = recorded?.split(separator: "/").last, last.hasSuffix(".xcdatamodel") else { return nil }
            return String(last.dropLast(".xcdatamodel".count))
        }
        let steps = zip(versions, versions.dropFirst()).map { ($0.name, $1.name) }
        if let from = version(model.sourceModelPath), let to = version(model.destinationModelPath),
            steps.contains(where: { $0 == (from, to) })
        {
            return from + "→" + to
        }
        let folder = path.split(separator: "/").last.map(String.init) ?? path
        for (from, to) in steps where folder == "\(from)-\(to).xcmappingmodel" { return from + "→" + to }
        throw MigrationError.badTarget(
            path: path,
            detail:
                "this mapping model is for none of the steps (\(steps.map { "\($0) → \($1)" }.joined(separator: ", ")))"
        )
    }

    /// A read-write connection that never writes: for the backup (`VACUUM INTO` is refused under
    /// `query_only`) and the checks before the transaction.
    static let backupOptions = OpenOptions(
        access: .readWrite,
        walMode: false,
        synchronousNormal: false,
        foreignKeys: false,
        coreDataTriggerFunctions: false
    )

    /// The migration's connection: the journal mode left as the store has it (a failed run leaves the file
    /// byte-identical), foreign keys off while tables are rebuilt (checked at the end instead).
    static let migrationOptions = OpenOptions(access: .readWrite, walMode: false, foreignKeys: false)

    /// The store's version and the target's, as indexes into `versions`.
    static func range(
        _ connection: Connection,
        path: String,
        versions: [XCDataModelReader.Version],
        target: String?
    ) throws -> (Int, Int) {
        let store = try LegacyStore(connection: connection)
        guard let model = store.model else {
            throw MigrationError.unknownVersion(
                path: path,
                detail: "the store carries no model (no Z_MODELCACHE, no coexist_model)"
            )
        }
        guard
            let version = XCDataModelReader.Version.matching(
                model,
                identifiers: store.metadata.modelVersionIdentifiers,
                in: versions
            ), let from = versions.firstIndex(where: { $0.name == version.name })
        else {
            throw MigrationError.unknownVersion(
                path: path,
                detail: "its model is none of the versions \(versions.map(\.name).joined(separator: ", "))"
            )
        }
        let name = target ?? versions.first(where: \.isCurrent)?.name ?? versions.last?.name ?? ""
        guard let to = versions.firstIndex(where: { $0.name == name }) else {
            throw MigrationError.badTarget(
                path: path,
                detail: "no version \(name) (versions: \(versions.map(\.name).joined(separator: ", ")))"
            )
        }
        guard to >= from else {
            throw MigrationError.badTarget(
                path: path,
                detail: "the store is at \(versions[from].name), later than \(name): migrations only go forward"
            )
        }
        return (from, to)
    }

    /// Refuses while the bridge is behind (its cursor before the last token), mid initial sync, or holds
    /// parked work: what it has not mirrored was written under the old version.
    static func checkBridge(_ connection: Connection, path: String) throws {
        if try connection.tableExists("coexist_parked") {
            let parked =
                try connection.scalar(
                    "SELECT (SELECT count(*) FROM coexist_parked) + (SELECT count(*) FROM coexist_parked_object)"
                ).integerValue ?? 0
            guard parked == 0 else {
                throw MigrationError.bridgeNotCaughtUp(
                    path: path,
                    detail:
                        "the bridge holds \(parked) parked transactions or objects: settle them first (coexistctl parked)"
                )
            }
        }
        guard try connection.tableExists("coexist_bridge") else { return }
        let row = try connection.rows("SELECT cursor, initial_sync FROM coexist_bridge WHERE id = 1").first
        let cursor = row?[0].integerValue ?? 0
        let last =
            try connection.tableExists("ATRANSACTION")
            ? try connection.scalar("SELECT ifnull(max(Z_PK), 0) FROM ATRANSACTION").integerValue ?? 0 : 0
        guard row?[1] == SQLiteValue.null || row == nil, cursor >= last else {
            throw MigrationError.bridgeNotCaughtUp(
                path: path,
                detail: "the bridge has mirrored up to token \(cursor) of \(last)"
                    + (row?[1] != SQLiteValue.null ? " (its initial sync is not finished)" : "")
                    + ": let coexistd catch up (coexistctl wait), stop it, then migrate"
            )
        }
    }

    /// Runs the steps in one transaction on `connection`; returns what `backup` returned.
    @discardableResult
    static func run(
        _ connection: Connection,
        versions: [XCDataModelReader.Version],
        from: Int,
        plans: [Plan],
        options: Options,
        report: inout Report,
        backup: (() throws -> String)? = nil
    ) throws -> String? {
        try connection.execute("PRAGMA legacy_alter_table=ON")
        try connection.execute("BEGIN IMMEDIATE")
        var made: String?
        do {
            // Checked again under the write lock: nothing may have moved since the plan (an app's commit the
            // bridge has not mirrored, another migration).
            let (now, _) = try Self.range(
                connection,
                path: connection.path,
                versions: versions,
                target: versions[from + plans.count].name
            )
            guard now == from else {
                throw MigrationError.badTarget(
                    path: connection.path,
                    detail: "the store moved to \(versions[now].name) while the migration was planned: run it again"
                )
            }
            try Self.checkBridge(connection, path: connection.path)
            made = try backup?()
            let store = try LegacyStore(connection: connection)
            let frameworkVersion = store.metadata.frameworkVersion ?? StoreCreator.Options().frameworkVersion
            for (offset, plan) in plans.enumerated() {
                let step = try Self.step(
                    connection,
                    source: versions[from + offset],
                    destination: versions[from + offset + 1],
                    plan: plan,
                    frameworkVersion: frameworkVersion,
                    overrides: options.overrides
                )
                report.steps.append(step)
                if options.failAfterStep == offset + 1 {
                    throw MigrationError.injected(path: connection.path, step: offset + 1)
                }
            }
            let target = versions[from + plans.count]
            let finish = try Self.storeStatements(
                connection,
                model: target.model,
                hashes: options.versionInfo?.hashes[target.name]
            )
            for statement in finish { try connection.run(statement.sql, statement.arguments) }
            report.finish = finish.map(\.display)
            try Self.check(connection)
            try connection.execute(options.dryRun ? "ROLLBACK" : "COMMIT")
        } catch {
            if !connection.isAutocommit { try? connection.execute("ROLLBACK") }
            // The store is as it was; the backup stays, and the operator is told where.
            if let made { throw MigrationError.rolledBack(path: connection.path, backup: made, underlying: error) }
            throw error
        }
        return made
    }

    /// The last history token (0: none).
    static func lastToken(_ connection: Connection) throws -> Int64 {
        guard try connection.tableExists("ATRANSACTION") else { return 0 }
        return try connection.scalar("SELECT ifnull(max(Z_PK), 0) FROM ATRANSACTION").integerValue ?? 0
    }

    /// Plans and runs one version step, part by part.
    static func step(
        _ connection: Connection,
        source: XCDataModelReader.Version,
        destination: XCDataModelReader.Version,
        plan: Plan,
        frameworkVersion: Int,
        overrides: SchemaOverrides
    ) throws -> Report.Step {
        let name = "\(source.name) → \(destination.name)"
        let changes = ModelChanges(from: source.model, to: destination.model)
        let layout = try PlannedLayout(model: destination.model, frameworkVersion: frameworkVersion)
        var parts: [Report.Part] = []
        if let willMigrate = plan.stage?.willMigrate {
            let before = try Self.lastToken(connection)
            try willMigrate(
                MigrationStageContext(
                    connection: connection,
                    version: source.name,
                    model: source.model,
                    overrides: overrides
                )
            )
            // What it saved would be history of the source version the new schema never got: stages
            // write in didMigrate.
            guard try Self.lastToken(connection) == before else {
                throw MigrationError.unsupported(
                    path: connection.path,
                    step: "\(source.name) → \(destination.name)",
                    detail: "the stage's willMigrate saved changes: it may only read (save in didMigrate)"
                )
            }
            parts.append(Report.Part(part: "custom stage", statements: ["willMigrate (Swift)"]))
        }
        // The last token written under the source version.
        let lastToken = try Self.lastToken(connection)
        let before = try LegacyStore(connection: connection, model: source.model)
        guard let old = before.schema else {
            throw MigrationError.unsupported(
                path: connection.path,
                step: name,
                detail: "the store's schema does not resolve"
            )
        }
        let legacy = LegacyStepPlanner(
            connection: connection,
            source: source.model,
            destination: destination.model,
            mapping: plan.mapping,
            frameworkVersion: frameworkVersion,
            step: name,
            migrationID: try HistoryEras.nextID(connection)
        )
        // What the history up to now was written under, taken before anything changes.
        let era = HistoryEra(
            id: legacy.migrationID,
            fromVersion: source.name,
            toVersion: destination.name,
            lastToken: lastToken,
            model: source.model,
            numbers: Dictionary(
                old.entities.values.map { ($0.name, $0.number) },
                uniquingKeysWith: { first, _ in first }
            ),
            renumbering: legacy.renumbering(old, layout),
            slotOrders: before.slotCalibration.order
        )
        let planners: [(String, () throws -> [MigrationStatement])] = [
            ("legacy", { try legacy.plan() }),
            (
                "new schema",
                {
                    try NewSchemaStepPlanner(
                        connection: connection,
                        source: source.model,
                        destination: destination.model,
                        mapping: plan.mapping,
                        overrides: overrides,
                        step: name
                    ).plan()
                }
            ),
            (
                "bridge",
                {
                    try BridgeStepPlanner(
                        connection: connection,
                        source: source.model,
                        destination: destination.model,
                        mapping: plan.mapping,
                        layout: layout
                    ).plan()
                }
            ),
            (
                "record",
                {
                    try HistoryEras.recordStatements(era, now: TransactionWriter.now()).map {
                        MigrationStatement($0.sql, $0.arguments)
                    }
                }
            ),
        ]
        for (part, planner) in planners {
            let statements = try planner()
            for statement in statements { try connection.run(statement.sql, statement.arguments) }
            parts.append(Report.Part(part: part, statements: statements.map(\.display)))
        }
        if let didMigrate = plan.stage?.didMigrate {
            try didMigrate(
                MigrationStageContext(
                    connection: connection,
                    version: destination.name,
                    model: destination.model,
                    overrides: overrides
                )
            )
            parts.append(Report.Part(part: "custom stage", statements: ["didMigrate (Swift)"]))
        }
        return Report.Step(
            from: source.name,
            to: destination.name,
            how: plan.how,
            changes: changes.changes.map(\.description),
            parts: parts
        )
    }

    /// `Z_METADATA` (version identifiers and hashes), `Z_MODELCACHE` emptied, `coexist_model` replaced.
    static func storeStatements(
        _ connection: Connection,
        model: Model,
        hashes: [String: [UInt8]]?
    ) throws -> [MigrationStatement] {
        guard
            let row = try connection.rows("SELECT Z_VERSION, Z_PLIST FROM Z_METADATA ORDER BY Z_VERSION LIMIT 1").first,
            let bytes = row[1].blobValue
        else {
            throw LegacyStoreError.notCoreDataStore(path: connection.path, reason: "Z_METADATA has no plist")
        }
        let plist = try StoreMetadata.migratedPlist(
            bytes,
            versionIdentifiers: model.versionIdentifiers,
            hashes: hashes,
            path: connection.path
        )
        var result = [
            MigrationStatement("UPDATE Z_METADATA SET Z_PLIST = ? WHERE Z_VERSION = ?", [.blob(plist), row[0]])
        ]
        if try connection.tableExists("Z_MODELCACHE") { result.append(MigrationStatement("DELETE FROM Z_MODELCACHE")) }
        result += try LegacyStore.storedModelStatements(model).map { MigrationStatement($0.sql, $0.arguments) }
        return result
    }

    /// `foreign_key_check` empty and `integrity_check` "ok", inside the transaction.
    static func check(_ connection: Connection) throws {
        let violations = try connection.rows("PRAGMA foreign_key_check")
        guard violations.isEmpty else {
            let first = violations.prefix(3).map { row in
                "\(row[0].textValue ?? "?") row \(row[1].integerValue ?? 0) → \(row[2].textValue ?? "?")"
            }
            throw MigrationError.checkFailed(
                path: connection.path,
                detail: "\(violations.count) foreign key violations (" + first.joined(separator: "; ") + ")"
            )
        }
        let integrity = try connection.rows("PRAGMA integrity_check").compactMap { $0[0].textValue }
        guard integrity == ["ok"] else {
            throw MigrationError.checkFailed(
                path: connection.path,
                detail: "integrity_check: " + integrity.prefix(3).joined(separator: "; ")
            )
        }
    }

    /// `VACUUM INTO` `<store>.backup-<version>-<UTC time>Z.sqlite` (`-2`, `-3` … for more in the same
    /// second), with the store's file mode; never over an existing file.
    static func backup(_ connection: Connection, of path: String, version: String) throws -> String {
        let stamp = ReferenceDate.iso8601(secondsSince2001: TransactionWriter.now())
            .filter { $0.isNumber || $0 == "T" }.prefix(15)
        let safe = String(version.map { $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" ? $0 : "_" })
        let base = "\(path).backup-\(safe)-\(stamp)Z"
        var status = stat()
        let mode = stat(path, &status) == 0 ? status.st_mode & 0o777 : 0o600
        // Made empty first, exclusively, with the store's mode (the data is never readable by more users
        // than the store's); VACUUM INTO fills an empty file. A second run in the same second gets the next name.
        for attempt in 1...1_000 {
            let target = attempt == 1 ? base + ".sqlite" : base + "-\(attempt).sqlite"
            let descriptor = open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)
            if descriptor < 0 && errno == EEXIST { continue }
            guard descriptor >= 0 else {
                throw LegacyStoreError.cannotCreate(path: target, reason: String(cString: strerror(errno)))
            }
            fchmod(descriptor, mode)
            close(descriptor)
            do {
                try connection.run("VACUUM INTO ?", [.text(target)])
            } catch {
                unlink(target)
                throw error
            }
            return target
        }
        throw LegacyStoreError.cannotCreate(path: base + ".sqlite", reason: "a thousand backups of this second exist")
    }

    /// A scratch copy of the store for a dry run, in a new private folder (mode 0700) of the temporary
    /// folder; returns the folder and the copy.
    static func scratchCopy(_ connection: Connection, of path: String) throws -> (folder: String, copy: String) {
        let parent = ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
        var template = Array("\(parent)/coexist-migrate-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw LegacyStoreError.cannotCreate(path: parent, reason: "no scratch folder for the dry run")
        }
        let folder = String(cString: made)
        let copy = folder + "/store.sqlite"
        do {
            try connection.run("VACUUM INTO ?", [.text(copy)])
        } catch {
            rmdir(folder)
            throw error
        }
        return (folder, copy)
    }
}
