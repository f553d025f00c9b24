import CoexistBridge
import CoexistConfiguration
import CoexistLegacyStore
import CoexistMigration
import CoexistModel
import CoexistRuntime

extension Daemon {
    /// With `auto-migrate = lightweight`, a store at an older version of the configured `.xcdatamodeld` is
    /// migrated before anything else opens it, each step logged; a step that is not lightweight (not
    /// inferable, or shipped with a mapping model) refuses the start, naming the migrate command.
    func migrateIfConfigured() throws {
        guard configuration.autoMigrate == .lightweight, let modelPath = configuration.model,
            modelPath.hasSuffix(".xcdatamodeld") || modelPath.hasSuffix(".xcdatamodeld/")
        else { return }
        let probe = try LegacyStore(path: configuration.database, options: .readOnly)
        guard let gap = Migrator.versionGap(store: probe, modelPath: modelPath, command: ""), gap.older else {
            return
        }
        let versions = try XCDataModelReader.readVersions(path: modelPath)
        var options = Migrator.Options(
            versionInfo: try Migrator.versionInfo(beside: modelPath),
            overrides: configuration.overrides,
            mappingModels: Migrator.mappingModels(beside: modelPath, versions: versions)
        )
        options.lightweightOnly = true
        options.transforms = configuration.transforms
        // However long one phase (the backup, a step, the checks) takes, systemd's start timeout is
        // extended every few seconds while the migration runs.
        let heartbeat = StartupHeartbeat(notifier: notifier, phase: "auto-migrate: starting")
        defer { heartbeat.stop() }
        options.progress = { text, _ in heartbeat.enter("auto-migrate: \(text)") }
        let report: Migrator.Report
        do {
            report = try Migrator.migrate(store: configuration.database, versions: versions, options: options)
        } catch let error as MigrationError {
            switch error {
            case .notInferable, .customPolicy, .unsupported:
                throw BridgeError.modelMismatch(
                    "auto-migrate = lightweight migrates lightweight steps only: \(error); "
                        + "run coexistctl migrate \(configuration.database) --model \(modelPath)"
                )
            default: throw error
            }
        }
        let fields: [LogField: String] = [.event: "migrated", .database: configuration.database]
        for warning in report.warnings { logger.warning(warning, fields: [.database: configuration.database]) }
        for step in report.steps {
            logger.notice(
                "migrated \(configuration.database): \(step.from) → \(step.to): "
                    + step.changes.joined(separator: "; "),
                fields: fields
            )
        }
        logger.notice(
            "migrated \(configuration.database) to \(report.to); backup \(report.backup ?? "none")",
            fields: fields
        )
    }

    /// How the served file migrates when `coexistctl migrate` asks the running daemon: to a version of the
    /// configured `.xcdatamodeld` (read again: the app may have shipped a new version), with its mapping
    /// models and compiled hashes, under the lock this process holds; each step logged.
    static func migrateServed(
        _ configuration: DaemonConfiguration,
        logger: Logger
    ) -> @Sendable (String?) throws -> Migrator.Report {
        let database = configuration.database
        let modelPath = configuration.model
        let overrides = configuration.overrides
        let transforms = configuration.transforms
        return { target in
            guard let modelPath, modelPath.hasSuffix(".xcdatamodeld") || modelPath.hasSuffix(".xcdatamodeld/") else {
                throw BridgeError.modelMismatch(
                    "migrating needs the configured model to be an .xcdatamodeld with every version"
                )
            }
            let versions = try XCDataModelReader.readVersions(path: modelPath)
            var options = Migrator.Options(
                target: target,
                versionInfo: try Migrator.versionInfo(beside: modelPath),
                overrides: overrides,
                mappingModels: Migrator.mappingModels(beside: modelPath, versions: versions)
            )
            options.servingLockHeld = true
            options.transforms = transforms
            let report = try Migrator.migrate(store: database, versions: versions, options: options)
            for step in report.steps {
                logger.notice(
                    "migrated \(database): \(step.from) → \(step.to) (\(step.how))",
                    fields: [.event: "migrated", .database: database]
                )
            }
            if let backup = report.backup {
                logger.notice(
                    "migrated \(database) to \(report.to); backup \(backup)",
                    fields: [.event: "migrated", .database: database]
                )
            }
            return report
        }
    }
}
