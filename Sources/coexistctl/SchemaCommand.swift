import CoexistModel
import CoexistRuntime
import CoexistStore

/// `coexistctl schema --model PATH [--json] [--sql]`.
enum SchemaCommand: Subcommand {
    static let name = "schema"
    static let summary = "print the new schema derived from a model: tables, columns, encodings"
    static let usage = """
        usage: coexistctl schema --model PATH [--json] [--sql]

        Prints how each entity maps to a table of the new schema and each property to a column, with its
        encoding; --sql prints the CREATE statements instead; --json prints one object with both.

          --model PATH   an .xcdatamodeld folder (its current version), an .xcdatamodel folder or a
                         contents file
        """

    static func run(_ arguments: [String]) throws -> ExitCode {
        let parsed = try ArgumentParser(arguments, flags: ["json", "sql"], options: ["model"])
        _ = try parsed.positionals(min: 0, max: 0)
        guard let modelPath = parsed.option("model") else { throw ArgumentParser.UsageError("--model is required") }
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
}
