import CoexistLegacyStore
import CoexistModel
import CoexistRuntime
import CoexistSQLite

/// `coexistctl inspect STORE [--model PATH] [--slots [--calibrate] | --check-history] [--json]`.
enum InspectCommand: Subcommand {
    static let name = "inspect"
    static let summary = "describe a Core Data store: identity, entities, relationships, history"
    static let spec = CommandSpec(
        command: "coexistctl inspect",
        synopsis: ["STORE [--model PATH] [--slots [--calibrate] | --check-history] [--json]"],
        description: """
            Prints the store's UUID, framework version and model version identifiers, every entity with its
            number, parent, table and row count, every relationship with its storage (column or join table),
            and a summary of the persistent history. Reads only (but for --calibrate).
            """,
        options: [
            .value(
                "model",
                "PATH",
                "read the model from an .xcdatamodeld folder, an .xcdatamodel folder or a contents file instead "
                    + "of the store's own Z_MODELCACHE"
            ),
            .flag(
                "slots",
                "instead: each entity's ZCOLUMNS slots as coexist reads and writes them, with how each to-many's "
                    + "slot is known (observed in the store's history, inferred, or unknown: a guess from the "
                    + "model's order)"
            ),
            .flag(
                "calibrate",
                "with --slots: first learn the slots again from the history and keep what it shows in the store "
                    + "(coexist_slot_order, which coexistd also keeps up to date), beside what was kept before — "
                    + "the one option of inspect that writes"
            ),
            .flag(
                "check-history",
                "instead: decode every update of the history and report bitmaps of the wrong length, slots set "
                    + "past the last property and calibration conflicts; exit 1 when there is any"
            ),
            .flag("json", "print one JSON object"),
        ]
    )

    static func run(_ arguments: [String]) throws -> ExitCode {
        let parsed = try Help.parse(self, arguments)
        let path = try parsed.positionals(min: 1, max: 1)[0]
        let model = try parsed.option("model").map { try XCDataModelReader.read(path: $0) }
        if parsed.flag("calibrate") && !parsed.flag("slots") {
            throw ArgumentParser.UsageError("--calibrate goes with --slots")
        }
        let store = try LegacyStore(
            path: path,
            model: model,
            modelPath: parsed.option("model"),
            options: parsed.flag("calibrate") ? OpenOptions() : .readOnly
        )
        if parsed.flag("calibrate") { try store.connection.write { try store.keepCalibration() } }
        if parsed.flag("slots") && parsed.flag("check-history") {
            throw ArgumentParser.UsageError("--slots and --check-history are two different reports: give one")
        }
        if parsed.flag("slots") {
            let report = SlotLayoutReport(store: store)
            StandardStreams.out(parsed.flag("json") ? try JSONOutput.encode(report) : report.text)
            return .success
        }
        if parsed.flag("check-history") {
            let check = try HistoryCheck(store: store)
            StandardStreams.out(parsed.flag("json") ? try JSONOutput.encode(check) : check.text)
            return check.passed ? .success : .failure
        }
        let report = try StoreReport(store: store)
        StandardStreams.out(parsed.flag("json") ? try JSONOutput.encode(report) : report.text)
        return .success
    }
}
