import CoexistLegacyStore
import CoexistModel
import CoexistRuntime

/// `coexistctl inspect STORE [--model PATH] [--json]`.
enum InspectCommand: Subcommand {
    static let name = "inspect"
    static let summary = "describe a Core Data store: identity, entities, relationships, history"
    static let usage = """
        usage: coexistctl inspect STORE [--model PATH] [--json]

        Prints the store's UUID, framework version and model version identifiers, every entity with its
        number, parent, table and row count, every relationship with its storage (column or join table),
        and a summary of the persistent history.

          --model PATH   read the model from an .xcdatamodeld folder, an .xcdatamodel folder or a contents
                         file instead of the store's own Z_MODELCACHE
          --json         print one JSON object
        """

    static func run(_ arguments: [String]) throws -> ExitCode {
        let parsed = try ArgumentParser(arguments, flags: ["json"], options: ["model"])
        let path = try parsed.positionals(min: 1, max: 1)[0]
        let model = try parsed.option("model").map { try XCDataModelReader.read(path: $0) }
        let store = try LegacyStore(path: path, model: model, modelPath: parsed.option("model"))
        let report = try StoreReport(store: store)
        StandardStreams.out(parsed.flag("json") ? try JSONOutput.encode(report) : report.text)
        return .success
    }
}
