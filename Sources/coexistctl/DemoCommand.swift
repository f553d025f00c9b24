import CoexistLegacyStore
import CoexistModel
import CoexistRuntime

#if canImport(Glibc)
import Glibc
#endif

/// `coexistctl demo [--model PATH] [--store PATH]`: the embedded default job.
enum DemoCommand: Subcommand {
    static let name = "demo"
    static let summary = "create a demo store from the demo Task/Category model and inspect it"
    static let usage = """
        usage: coexistctl demo [--model PATH] [--store PATH]

        Creates a fresh Core Data store from the demo model (config/TaskModel.xcdatamodeld, current version)
        and prints what inspect reports about it.

          --model PATH   the model to use (default: config/TaskModel.xcdatamodeld)
          --store PATH   where to create the store (default: a new file under $TMPDIR or /tmp);
                         an existing file is replaced
        """

    static func run(_ arguments: [String]) throws -> ExitCode {
        let parsed = try ArgumentParser(arguments, flags: [], options: ["model", "store"])
        _ = try parsed.positionals(min: 0, max: 0)
        let modelPath = parsed.option("model") ?? "config/TaskModel.xcdatamodeld"
        let model = try XCDataModelReader.read(path: modelPath)
        let directory = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        let path = parsed.option("store") ?? "\(directory)/coexist-demo-\(getpid()).sqlite"
        for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
        let store = try StoreCreator.create(path: path, model: model)
        StandardStreams.out("created \(path) from \(modelPath)\n")
        StandardStreams.out(try StoreReport(store: store).text)
        return .success
    }
}
