import CoexistBridge
import CoexistLegacyStore
import CoexistModel
import CoexistRuntime
import CoexistSQLite

/// `coexistctl verify STORE [--model PATH] [--json]` (or `--database`/`--config`).
enum VerifyCommand: Subcommand {
    static let name = "verify"
    static let summary = "compare both schemas object by object; exit 0 when equal, 1 otherwise"
    static let usage = """
        usage: coexistctl verify [STORE | --database PATH | --config FILE] [--model PATH] [--json] [--limit N]

        Compares the Core Data tables and the new schema object by object: identity, every attribute after
        conversion, every relationship. Prints the differences; exits 0 when there is none, 1 otherwise (and
        1 with one line for a store the bridge has never run on). Opens the store read-only: it writes nothing.
        --json prints {equal, objects: {legacy, new}, differences: [...], differenceCount}.
        """

    static func run(_ arguments: [String]) throws -> ExitCode {
        let parsed = try ArgumentParser(arguments, flags: ["json"], options: ["model", "database", "config", "limit"])
        let target = try StoreTarget(parsed)
        let limit = Int(parsed.option("limit") ?? "1000") ?? 1_000
        // Read means read: the store is opened read-only, and nothing is created in it.
        _ = try LegacyStore(path: target.database, options: .readOnly)
        let connection = try Connection(path: target.database, options: .readOnly)
        let model = try target.model.map { try XCDataModelReader.read(path: $0) }
        let engine = try SyncEngine(
            connection: connection,
            model: model,
            overrides: target.overrides,
            readOnly: true
        )
        let report = try Verifier(engine: engine, limit: limit).run()
        if parsed.flag("json") {
            StandardStreams.out(try JSONOutput.encode(report))
        } else {
            StandardStreams.out(
                report.equal
                    ? "equal: \(report.objects.legacy) objects on each side"
                    : "\(report.differenceCount) differences (legacy \(report.objects.legacy) objects, new \(report.objects.new)):"
                        + report.differences.map { "\n  " + $0 }.joined()
            )
        }
        return report.equal ? .success : .failure
    }
}
