import CoexistLegacyStore
import CoexistModel
import CoexistRuntime

/// `coexistctl create STORE --model PATH [--version-info PLIST] [--framework-version N] [--no-history] [--json]`.
enum CreateCommand: Subcommand {
    static let name = "create"
    static let summary = "create an empty Core Data store from a model"
    static let spec = CommandSpec(
        command: "coexistctl create",
        synopsis: [
            """
            STORE --model PATH [--version-info PLIST] [--framework-version N] [--no-history]
                                    [--json]
            """
        ],
        description: """
            Creates STORE (which must not exist) with the tables, indexes and metadata Core Data would write
            for the model, in WAL mode, with the persistent-history tables, then prints what inspect prints.
            """,
        options: [
            .value(
                "model",
                "PATH",
                "an .xcdatamodeld folder (its current version), an .xcdatamodel folder or a contents file"
            ),
            .value(
                "version-info",
                "PLIST",
                "the compiled model's VersionInfo.plist: its hashes become the store's NSStoreModelVersionHashes "
                    + "(without it none are written)"
            ),
            .value(
                "framework-version",
                "N",
                "the NSPersistenceFrameworkVersion to record and write the layout of (default 1522, macOS 26.1; "
                    + "before 1000, uniqueness constraints are table constraints)"
            ),
            .flag("no-history", "leave out the persistent-history tables"),
            .flag("json", "print the report as JSON"),
        ]
    )

    static func run(_ arguments: [String]) throws -> ExitCode {
        let parsed = try Help.parse(self, arguments)
        let path = try parsed.positionals(min: 1, max: 1)[0]
        guard let modelPath = parsed.option("model") else { throw ArgumentParser.UsageError("--model is required") }
        let model = try XCDataModelReader.read(path: modelPath)
        var options = StoreCreator.Options(history: !parsed.flag("no-history"))
        if let text = parsed.option("framework-version") {
            guard let version = Int(text), (1...100_000).contains(version) else {
                throw ArgumentParser.UsageError("--framework-version takes a number from 1 to 100000, not \(text)")
            }
            options.frameworkVersion = version
        }
        if let versionInfo = parsed.option("version-info") {
            options.versionHashes = try VersionInfo.read(path: versionInfo).currentHashes()
        }
        let store = try StoreCreator.create(path: path, model: model, options: options)
        let report = try StoreReport(store: store)
        StandardStreams.out(parsed.flag("json") ? try JSONOutput.encode(report) : report.text)
        return .success
    }
}
