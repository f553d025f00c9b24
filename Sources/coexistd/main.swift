import CoexistLegacyStore
import CoexistModel
import CoexistRuntime

#if canImport(Glibc)
import Glibc
#endif

// coexistd: the bridge daemon. This build checks a store and its model; the sync engine is not built yet,
// so anything but --check is refused with EX_UNAVAILABLE rather than pretending to run.
let usage = """
    usage: coexistd --database PATH [--model PATH] --check

      --database PATH   the shared SQLite file (a Core Data store)
      --model PATH      the app's .xcdatamodeld (default: the store's own Z_MODELCACHE)
      --check           open the store, resolve the model against it, report, and exit
    """

do {
    let arguments = Array(CommandLine.arguments.dropFirst())
    if arguments.contains("--help") || arguments.contains("-h") {
        StandardStreams.out(usage)
        exit(ExitCode.success.rawValue)
    }
    let parsed = try ArgumentParser(arguments, flags: ["check"], options: ["database", "model"])
    _ = try parsed.positionals(min: 0, max: 0)
    guard let database = parsed.option("database") else { throw ArgumentParser.UsageError("--database is required") }
    guard parsed.flag("check") else {
        StandardStreams.error("coexistd: the sync engine is not available in this build; use --check")
        exit(ExitCode.unavailable.rawValue)
    }
    let model = try parsed.option("model").map { try XCDataModelReader.read(path: $0) }
    let store = try LegacyStore(path: database, model: model, modelPath: parsed.option("model"))
    let entities = store.schema?.entities.count ?? 0
    StandardStreams.out(
        "coexistd: \(database): Core Data store \(store.metadata.storeUUID), \(entities) entities mapped"
    )
    exit(ExitCode.success.rawValue)
} catch let error as ArgumentParser.UsageError {
    StandardStreams.error("coexistd: \(error.message)\n\n\(usage)")
    exit(ExitCode.usage.rawValue)
} catch let error as ModelError {
    StandardStreams.error("coexistd: \(error)")
    exit(error.kind == .missingFile ? ExitCode.noInput.rawValue : ExitCode.dataError.rawValue)
} catch {
    StandardStreams.error("coexistd: \(error)")
    exit(ExitCode.dataError.rawValue)
}
