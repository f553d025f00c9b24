import CoexistHistory
import CoexistLegacyStore
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
            // Guarded: should SQLite roll the transaction back itself, no later statement runs on its own.
            try connection.insideTransaction {
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
                if backup != nil { options.progress?("backing up the store", 0) }
                made = try backup?()
                let store = try LegacyStore(connection: connection)
                let frameworkVersion = store.metadata.frameworkVersion ?? StoreCreator.Options().frameworkVersion
                for (offset, plan) in plans.enumerated() {
                    options.progress?(
                        "step \(offset + 1) of \(plans.count): \(versions[from + offset].name) → \(versions[from + offset + 1].name)",
                        Double(offset) / Double(plans.count + 1)
                    )
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
                options.progress?("checking foreign keys and integrity", Double(plans.count) / Double(plans.count + 1))
                try Self.check(connection)
                try connection.execute(options.dryRun ? "ROLLBACK" : "COMMIT")
            }
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
}
