import CoexistLegacyStore
import CoexistModel
import CoexistRuntime
import CoexistStore

/// `coexistctl schema --model PATH [--json] [--sql]`.
enum SchemaCommand: Subcommand {
    static let name = "schema"
    static let summary = "print the new schema derived from a model: tables, columns, encodings"
    static let spec = CommandSpec(
        command: "coexistctl schema",
        synopsis: ["--model PATH [--json] [--sql]", "--model M.xcdatamodeld --versions [--store STORE] [--json]"],
        description: """
            Prints how each entity maps to a table of the new schema and each property to a column, with its
            encoding; --sql prints the CREATE statements instead; --json prints one object with both.
            --versions lists the versions of an .xcdatamodeld in order and what changes from each to the next:
            entities, attributes and relationships added, removed, renamed (renaming identifiers), type,
            optionality, default, delete-rule, hierarchy and uniqueness changes; whether Core Data could infer
            the migration (lightweight) or it needs a mapping model, and why. With --store, which version that
            Core Data store is at (from its own model; read-only).
            """,
        options: [
            .value(
                "model",
                "PATH",
                "an .xcdatamodeld folder (its current version), an .xcdatamodel folder or a contents file"
            ),
            .flag("sql", "print the CREATE statements of the new schema instead"),
            .flag("json", "print one JSON object: the mapping and the statements, or with --versions the versions"),
            .flag(
                "versions",
                "instead: the versions of the .xcdatamodeld --model names, in order, and what changes from each to "
                    + "the next"
            ),
            .value("store", "STORE", "with --versions: also which version the Core Data store STORE is at"),
        ]
    )

    static func run(_ arguments: [String]) throws -> ExitCode {
        let parsed = try Help.parse(self, arguments)
        _ = try parsed.positionals(min: 0, max: 0)
        guard let modelPath = parsed.option("model") else { throw ArgumentParser.UsageError("--model is required") }
        if parsed.flag("versions") {
            return try versions(modelPath, store: parsed.option("store"), json: parsed.flag("json"))
        }
        if parsed.option("store") != nil { throw ArgumentParser.UsageError("--store goes with --versions") }
        let schema = try NewSchema(model: XCDataModelReader.read(path: modelPath))
        let report = SchemaReport(schema)
        if parsed.flag("json") {
            StandardStreams.out(try JSONOutput.encode(report))
        } else if parsed.flag("sql") {
            StandardStreams.out(report.statements.map { $0 + ";" }.joined(separator: "\n"))
        } else {
            StandardStreams.out(report.text)
        }
        return .success
    }

    /// The versions of an `.xcdatamodeld` in order, and what changes from each to the next: whether Core
    /// Data could infer the migration (lightweight) and, when not, why.
    static func versions(_ path: String, store: String?, json: Bool) throws -> ExitCode {
        guard path.hasSuffix(".xcdatamodeld") || path.hasSuffix(".xcdatamodeld/") else {
            throw ArgumentParser.UsageError("--versions needs an .xcdatamodeld folder, not \"\(path)\"")
        }
        let versions = try XCDataModelReader.readVersions(path: path)
        // The version a store is at, from its own model (Z_MODELCACHE), read-only.
        var storeVersion: String?
        if let store {
            let legacy = try LegacyStore(path: store)
            guard let model = legacy.model else {
                throw LegacyStoreError.notCoreDataStore(path: store, reason: "the store carries no model to compare")
            }
            storeVersion =
                XCDataModelReader.Version.matching(
                    model,
                    identifiers: legacy.metadata.modelVersionIdentifiers,
                    in: versions
                )?.name ?? "none of them"
        }
        var steps: [Step] = []
        for (from, to) in zip(versions, versions.dropFirst()) {
            let changes = ModelChanges(from: from.model, to: to.model)
            steps.append(
                Step(
                    from: from.name,
                    to: to.name,
                    lightweight: changes.isLightweight,
                    changes: changes.changes.map(\.description),
                    reasons: changes.reasons
                )
            )
        }
        let report = Versions(
            versions: versions.map(\.name),
            current: versions.first(where: \.isCurrent)?.name,
            store: storeVersion,
            steps: steps
        )
        if json {
            StandardStreams.out(try JSONOutput.encode(report))
            return .success
        }
        var lines = [
            "versions: " + versions.map { $0.isCurrent ? $0.name + " (current)" : $0.name }.joined(separator: ", ")
        ]
        if let store, let storeVersion { lines.append("\(store) is at: \(storeVersion)") }
        for step in steps {
            lines.append(
                "\(step.from) → \(step.to): " + (step.lightweight ? "lightweight (inferred)" : "needs a mapping model")
            )
            lines += step.changes.map { "  " + $0 }
            lines += step.reasons.map { "  not inferable: " + $0 }
        }
        StandardStreams.out(lines.joined(separator: "\n"))
        return .success
    }

    struct Versions: Encodable {
        var versions: [String]
        var current: String?
        /// With `--store`: the version the store is at ("none of them" when none matches).
        var store: String?
        var steps: [Step]
    }

    struct Step: Encodable {
        var from: String
        var to: String
        var lightweight: Bool
        var changes: [String]
        var reasons: [String]
    }
}
