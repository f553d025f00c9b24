import CoexistBridge
import CoexistMigration
import CoexistModel
import CoexistProtocol
import CoexistRuntime
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// `coexistctl migrate STORE --model M.xcdatamodeld [--to VERSION] [--dry-run] [--sql] [--json] [--momd PATH]`.
enum MigrateCommand: Subcommand {
    static let name = "migrate"
    static let summary = "move a store to a later version of its model: both schemas and the bridge, in one transaction"
    static let spec = CommandSpec(
        command: "coexistctl migrate",
        synopsis: [
            """
            STORE --model M.xcdatamodeld [--to VERSION] [--dry-run] [--sql] [--json]
                                     [--momd PATH] [--mapping PATH]…
            """,
            "--config FILE [--to VERSION] [--dry-run] [--sql] [--json] [--momd PATH]",
        ],
        description: """
            Finds the version STORE is at (from its own model), then carries it through every later version up
            to --to, in order: the Core Data tables rebuilt to that version's layout (Z_ENT renumbered,
            Z_PRIMARYKEY, tombstone columns, Z_METADATA), the new schema to that version's derived schema, and
            the bridge's identity map, all in ONE SQLite transaction, after a VACUUM INTO backup beside the store
            (its path is printed). Every row is kept; new attributes get the model's default on both sides;
            renamed properties keep their values. A step the app ships a mapping model for
            (<from>-<to>.xcmappingmodel beside the .xcdatamodeld, or --mapping) runs that mapping; a step Core
            Data could not infer is refused with the reasons, as is a mapping's custom policy with no stage.
            On a file a coexistd serves, that coexistd is asked to migrate it (over its socket; a dry run reads
            here). Refused while the bridge has not mirrored everything or holds parked work (exit 75).
            """,
        options: [
            StoreTarget.modelSpec("the .xcdatamodeld with every version (or the config's model)"),
            .value("to", "VERSION", "the version to reach (default: the current one)"),
            .flag("dry-run", "plan and check every step on a scratch copy; the store is not touched"),
            .flag("sql", "print every statement of every step"),
            .repeatable(
                "mapping",
                "PATH",
                "a mapping model (.xcmappingmodel) for a step, besides those found beside the .xcdatamodeld "
                    + "(<from>-<to>.xcmappingmodel); repeatable"
            ),
            .value(
                "momd",
                "PATH",
                "the compiled model (a .momd folder or its VersionInfo.plist), whose hashes go to Z_METADATA; "
                    + "default: <name>.momd beside the .xcdatamodeld; without one the old hashes are removed, never "
                    + "invented"
            ),
        ] + StoreTarget.optionSpecs + [.flag("json", "print the report as JSON")]
    )

    static func run(_ arguments: [String]) throws -> ExitCode {
        let parsed = try Help.parse(self, arguments)
        _ = try parsed.positionals(min: 0, max: 1)
        let target = try StoreTarget(parsed)
        guard let modelPath = target.model else {
            throw ArgumentParser.UsageError("--model is required (the .xcdatamodeld with every version)")
        }
        guard modelPath.hasSuffix(".xcdatamodeld") || modelPath.hasSuffix(".xcdatamodeld/") else {
            throw ArgumentParser.UsageError(
                "--model must be an .xcdatamodeld folder (all versions), not \"\(modelPath)\""
            )
        }
        let versions = try XCDataModelReader.readVersions(path: modelPath)
        var options = Migrator.Options(
            target: parsed.option("to"),
            dryRun: parsed.flag("dry-run"),
            versionInfo: try versionInfo(parsed.option("momd"), model: modelPath),
            overrides: target.overrides
        )
        options.mappingModels = Migrator.mappingModels(beside: modelPath, versions: versions)
        for path in parsed.values("mapping") {
            options.mappingModels[try Migrator.mappingModelStep(path, versions: versions)] = path
        }
        options.transforms = target.transforms
        // A coexistd serving the file migrates it itself: it stops mirroring, migrates, resumes from its
        // cursor with the new version, and tells its subscribers. A dry run only reads: it runs here.
        if !options.dryRun, let socket = try? ServingDaemon.socket(ofDatabase: target.database) {
            return try migrateThroughDaemon(socket, target: options.target, json: parsed.flag("json"))
        }
        if let hook = getenv(Migrator.failureHook) { options.failAfterStep = Int(String(cString: hook)) }
        let line = ProgressLine(delay: 0)
        options.progress = { text, fraction in line.update("migrate: " + text, fraction: fraction, force: true) }
        defer { line.finish() }
        let report = try Migrator.migrate(store: target.database, versions: versions, options: options)
        for warning in report.warnings { StandardStreams.error("coexistctl: warning: \(warning)") }
        if parsed.flag("json") {
            StandardStreams.out(try JSONOutput.encode(report))
        } else {
            StandardStreams.out(text(report, sql: parsed.flag("sql")))
        }
        return .success
    }

    /// Asks the coexistd on `socket` to migrate the file it serves (the model is its configured one).
    static func migrateThroughDaemon(_ socket: String, target: String?, json: Bool) throws -> ExitCode {
        let client = try LineClient(path: socket, timeout: 2)
        try client.send(EventRequest("migrate", to: target).text)
        guard let reply = try client.readLine() else { return .unavailable }
        struct Reply: Decodable {
            var type: String
            var from: String?
            var to: String?
            var steps: Int?
            var backup: String?
            var message: String?
            var exit: Int32?
        }
        let decoded = try JSONDecoder().decode(Reply.self, from: Data(reply.utf8))
        if json {
            StandardStreams.out(reply)
        } else if decoded.type == "migrated" {
            let steps = decoded.steps ?? 0
            StandardStreams.out(
                steps == 0
                    ? "coexistd: the store is at \(decoded.to ?? "?") already: nothing to do"
                    : "coexistd migrated the store: \(decoded.from ?? "?") → \(decoded.to ?? "?"), \(steps) step(s); backup: "
                        + (decoded.backup ?? "none") + "; mirroring resumed, subscribers told"
            )
        }
        guard decoded.type == "migrated" else {
            StandardStreams.error("coexistctl migrate: coexistd: \(decoded.message ?? reply)")
            return decoded.exit.flatMap(ExitCode.init(rawValue:)) ?? .software
        }
        return .success
    }

    /// The compiled model's version hashes: `--momd` (a folder or the plist), else `<name>.momd` beside
    /// the `.xcdatamodeld` when there is one.
    static func versionInfo(_ option: String?, model: String) throws -> VersionInfo? {
        if let option {
            let plist = option.hasSuffix(".plist") ? option : option + "/VersionInfo.plist"
            return try VersionInfo.read(path: plist)
        }
        return try Migrator.versionInfo(beside: model)
    }

    static func text(_ report: Migrator.Report, sql: Bool) -> String {
        guard !report.steps.isEmpty else { return "\(report.store) is at \(report.to) already: nothing to do" }
        var lines = ["\(report.store): \(report.from) → \(report.to), \(report.steps.count) step(s)"]
        if let backup = report.backup { lines.append("backup: \(backup)") }
        for step in report.steps {
            let counts = step.parts.map { "\($0.part) \($0.statements.count)" }.joined(separator: ", ")
            lines.append("step \(step.from) → \(step.to) (statements: \(counts))")
            lines += step.changes.map { "  " + $0 }
            if sql {
                for part in step.parts where !part.statements.isEmpty {
                    lines.append("  -- \(part.part)")
                    lines += part.statements.map { "  " + $0 + ";" }
                }
            }
        }
        if sql && !report.finish.isEmpty {
            lines.append("-- store")
            lines += report.finish.map { "  " + $0 + ";" }
        }
        lines.append(
            report.dryRun
                ? "dry run: every step planned and checked on a scratch copy; \(report.store) was not changed"
                : "migrated to \(report.to)"
        )
        return lines.joined(separator: "\n")
    }
}
