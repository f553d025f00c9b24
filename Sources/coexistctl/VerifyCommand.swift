import CoexistBridge
import CoexistConfiguration
import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistRuntime
import CoexistSQLite

/// `coexistctl verify STORE [--model PATH] [--json] [--repair [--from SIDE] [--dry-run]]` (or
/// `--database`/`--config`).
enum VerifyCommand: Subcommand {
    static let name = "verify"
    static let summary = "compare both schemas object by object; exit 0 when equal, 1 otherwise; --repair"
    static let spec = CommandSpec(
        command: "coexistctl verify",
        synopsis: [
            """
            [STORE | --database PATH | --config FILE] [--model PATH] [--json] [--limit N]
                                     [--repair [--from legacy|new] [--dry-run]] [--bootstrap]
            """
        ],
        description: """
            Compares the Core Data tables and the new schema object by object: identity, every attribute after
            conversion, every relationship. Prints the differences; exits 0 when equal, 1 otherwise (and 1 with
            one line for a store the bridge has never run on). Opens the store read-only: it writes nothing.
            """,
        options: StoreTarget.optionSpecs + [
            StoreTarget.modelSpec(),
            .value("limit", "N", "list at most N differences (default 1000; all are counted)"),
            .flag(
                "repair",
                "mirror what is pending, then re-apply every object that differs from one side into the other, in "
                    + "one transaction recorded as the bridge's own, and compare again (exit 0 when equal). An object "
                    + "missing from the right side is deleted from the other only if it was mirrored before; parked "
                    + "objects and objects never mirrored are left as they are, each named. Refused (exit 75) while a "
                    + "coexistd serves the file."
            ),
            .value(
                "from",
                "SIDE",
                "the side that is right: legacy or new; default the conflict policy's side (legacy-wins: legacy, "
                    + "new-wins: new, later-wins: legacy)"
            ),
            .flag("dry-run", "with --repair: print what would be repaired, change nothing"),
            .flag(
                "bootstrap",
                "on a store the bridge never ran on: set it up first as coexistd's first start does (new schema, "
                    + "bridge tables, initial sync; writes the store), then compare. Refused (exit 75) while a "
                    + "coexistd serves the file."
            ),
            .flag(
                "json",
                "{equal, objects: {legacy, new}, differences: [...], differenceCount}; with --repair, {before, "
                    + "repaired: {from, applied, deleted, tokens, skipped}, after}"
            ),
        ]
    )

    static func run(_ arguments: [String]) throws -> ExitCode {
        let parsed = try Help.parse(self, arguments)
        let target = try StoreTarget(parsed)
        let limit = try parsed.integer("limit", in: 0...Int.max, default: 1_000)
        let json = parsed.flag("json")
        if parsed.flag("bootstrap") {
            if parsed.flag("dry-run") { throw ArgumentParser.UsageError("--bootstrap writes: it has no --dry-run") }
            _ = try BridgeWriter(target, bootstrap: true)  // released before the comparison below
        }
        guard parsed.flag("repair") else {
            if parsed.flag("dry-run") || parsed.option("from") != nil {
                throw ArgumentParser.UsageError("--dry-run and --from go with --repair")
            }
            let report = try readOnlyReport(target, limit: limit)
            StandardStreams.out(json ? try JSONOutput.encode(report) : text(report))
            return report.equal ? .success : .failure
        }
        let source = try side(parsed.option("from"), policy: target.bridge.conflictPolicy)
        let before = try readOnlyReport(target, limit: limit)
        if parsed.flag("dry-run") || before.equal {
            if json {
                StandardStreams.out(try JSONOutput.encode(Repaired(before: before, repaired: nil, after: nil)))
            } else {
                StandardStreams.out(text(before))
                if !before.equal {
                    StandardStreams.out(
                        "would repair \(before.differing.count) objects from the \(source) side into the other"
                    )
                }
            }
            return before.equal ? .success : .failure
        }
        let writer = try BridgeWriter(target)
        // Under the lock, what is pending is mirrored first: what differs then is a divergence, not a change
        // on its way; compared again, and that is what gets repaired.
        _ = try writer.engine.catchUp()
        let pairs = try Verifier(engine: writer.engine, limit: 0).run().differing
        let result = try writer.engine.repair(pairs, from: source)
        let after = try Verifier(engine: writer.engine, limit: limit).run()
        let summary = Repaired.Summary(
            from: source.rawValue,
            applied: result.applied,
            deleted: result.deleted,
            tokens: result.tokens,
            skipped: result.skipped
        )
        if json {
            StandardStreams.out(try JSONOutput.encode(Repaired(before: before, repaired: summary, after: after)))
        } else {
            StandardStreams.out(
                "repaired \(pairs.count - result.skipped.count) objects from the \(source) side (\(result.applied) applied, "
                    + "\(result.deleted) deleted, transactions \(result.tokens.map(String.init).joined(separator: ", ")))"
            )
            for line in result.skipped { StandardStreams.out("  left as is: " + line) }
            StandardStreams.out(text(after))
        }
        return after.equal ? .success : .failure
    }

    /// The JSON of a repair.
    struct Repaired: Encodable {
        struct Summary: Encodable {
            var from: String
            var applied: Int
            var deleted: Int
            var tokens: [Int64]
            var skipped: [String]
        }
        var before: Verifier.Report
        var repaired: Summary?
        var after: Verifier.Report?
    }

    /// The comparison on a read-only connection (nothing is created in the store).
    static func readOnlyReport(_ target: StoreTarget, limit: Int) throws -> Verifier.Report {
        var verifier = Verifier(engine: try readOnlyEngine(target), limit: limit)
        let line = ProgressLine()
        verifier.progress = { done, total in
            line.update(
                "verify: compared \(done) of \(total) objects",
                fraction: total > 0 ? Double(done) / Double(total) : nil
            )
        }
        defer { line.finish() }
        return try verifier.run()
    }

    /// The bridge's view of a store it has run on, on a read-only connection; one line (exit 1) for a store
    /// it never ran on.
    static func readOnlyEngine(_ target: StoreTarget) throws -> SyncEngine {
        _ = try LegacyStore(path: target.database, options: .readOnly)
        let connection = try Connection(path: target.database, options: .readOnly)
        let model = try target.model.map { try XCDataModelReader.read(path: $0) }
        return try SyncEngine(
            connection: connection,
            model: model,
            overrides: target.overrides,
            configuration: target.bridge,
            readOnly: true
        )
    }

    /// The side `--from` names, or the conflict policy's.
    static func side(_ text: String?, policy: ConflictPolicy) throws -> Side {
        switch text {
        case nil: return policy == .newWins ? .new : .legacy
        case let text?:
            guard let side = Side(rawValue: text) else {
                throw ArgumentParser.UsageError("--from is legacy or new, not \"\(text)\"")
            }
            return side
        }
    }

    static func text(_ report: Verifier.Report) -> String {
        report.equal
            ? "equal: \(report.objects.legacy) objects on each side"
            : "\(report.differenceCount) differences (legacy \(report.objects.legacy) objects, new \(report.objects.new)):"
                + report.differences.map { "\n  " + $0 }.joined()
    }
}
