import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistRuntime
import CoexistStore
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// `coexistctl demo`: the main job on an embedded default. Creates a demo store from the demo model (both
/// schemas), starts coexistd on it, and has a legacy writer and a new-schema writer take turns while
/// printing what the other side sees once the bridge has mirrored each change.
enum DemoCommand: Subcommand {
    static let name = "demo"
    static let summary = "run coexistd on a demo store with a writer on each side, printing the changes flowing"
    static let usage = """
        usage: coexistctl demo [--model PATH] [--directory DIR] [--steps N]

        Creates a fresh store from the demo Task/Category model (config/TaskModel.xcdatamodeld), with the
        Core Data tables and the new schema; starts coexistd on it (the daemon next to coexistctl); then a
        legacy writer and a new-schema writer take turns, and after each write the other side's view is
        printed once the bridge has mirrored it. Ends with coexistctl verify's result.

          --model PATH      the model (default: config/TaskModel.xcdatamodeld)
          --directory DIR   where to create the store and the socket (default: a new folder under /tmp)
          --steps N         rounds of writes (default 3)
        """

    static func run(_ arguments: [String]) throws -> ExitCode {
        let parsed = try ArgumentParser(arguments, flags: [], options: ["model", "directory", "steps"])
        _ = try parsed.positionals(min: 0, max: 0)
        let modelPath = parsed.option("model") ?? "config/TaskModel.xcdatamodeld"
        let steps = try parsed.integer("steps", in: 1...10_000, default: 3)
        let model = try XCDataModelReader.read(path: modelPath)
        let directory = try parsed.option("directory") ?? makeDirectory()
        let path = directory + "/Demo.sqlite"
        for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
        let legacy = try StoreCreator.create(path: path, model: model)
        let new = try NewStore(path: path, model: model)
        try new.createSchema()
        StandardStreams.out(
            "demo store  \(path)\nmodel       \(modelPath) (version \(model.versionIdentifiers.joined()))"
        )

        let socket = directory + "/coexist.sock"
        let daemon = try ChildProcess(
            path: ChildProcess.executableDirectory() + "/coexistd",
            arguments: ["--database", path, "--socket", socket, "--poll-interval", "250ms", "--log-level", "notice"]
        )
        defer {
            daemon.terminate()
            daemon.wait()
        }
        let client = try LineClient(path: socket)
        StandardStreams.out("coexistd    pid \(daemon.pid), socket \(socket)\n")

        var category: ObjectID?
        var newTasks: [ObjectRef] = []
        for step in 1...steps {
            let legacyResult = try legacy.save(SaveMetadata(author: "legacy-app", processName: "demo")) { save in
                if category == nil {
                    category = try save.insert("Category", ["id": .uuid(randomUUID()), "name": .string("Errands")])
                }
                let task = try save.insert(
                    "Task",
                    [
                        "id": .uuid(randomUUID()), "title": .string("Legacy task \(step)"),
                        "createdAt": .date(TransactionWriter.now()),
                    ]
                )
                try save.setToOne(task, "category", category)
            }
            let legacyToken = legacyResult.token ?? 0
            StandardStreams.out("legacy  ▶ token \(legacyToken): inserted Task \"Legacy task \(step)\" into Errands")
            try waitForBridge(client, token: legacyToken)
            let rows = try new.connection.rows(
                "SELECT t.title, c.name FROM task t LEFT JOIN category c ON c.id = t.category_id ORDER BY t.rowid"
            )
            StandardStreams.out(
                "new     ◀ table task: "
                    + rows.map { "\"\($0[0].textValue ?? "")\" (\($0[1].textValue ?? "-"))" }.joined(separator: ", ")
            )

            let newResult = try new.save(SaveMetadata(author: "new-app", processName: "demo")) { save in
                let task = try save.insert(
                    "Task",
                    ["title": .string("New task \(step)"), "createdAt": .date(TransactionWriter.now())]
                )
                newTasks.append(task)
                if let first = newTasks.first {
                    try save.update(first, ["priority": .integer(Int64(step)), "isCompleted": .boolean(step % 2 == 0)])
                }
            }
            let newToken = newResult.token ?? 0
            StandardStreams.out(
                "new     ▶ token \(newToken): inserted Task \"New task \(step)\", set priority \(step) on \"New task 1\""
            )
            try waitForBridge(client, token: newToken)
            let legacyRows = try legacy.connection.rows("SELECT ZTITLE, ZPRIORITY, Z_OPT FROM ZTASK ORDER BY Z_PK")
            StandardStreams.out(
                "legacy  ◀ ZTASK: "
                    + legacyRows.map {
                        "\"\($0[0].textValue ?? "")\" priority \($0[1].integerValue ?? 0) Z_OPT \($0[2].integerValue ?? 0)"
                    }
                    .joined(separator: ", ") + "\n"
            )
        }
        let status = try request(client, #"{"op":"status"}"#)
        StandardStreams.out("coexistd    \(status)")
        StandardStreams.out("verify      coexistctl verify \(path)")
        return try runVerify(path)
    }

    static func waitForBridge(_ client: LineClient, token: Int64) throws {
        for _ in 0..<500 {
            struct Status: Decodable { var cursor: Int64 }
            let reply = try request(client, #"{"op":"status"}"#)
            if let status = try? JSONDecoder().decode(Status.self, from: Data(reply.utf8)), status.cursor >= token {
                return
            }
            usleep(10_000)
        }
        throw ArgumentParser.UsageError("coexistd did not mirror token \(token) within 5 s")
    }

    static func request(_ client: LineClient, _ line: String) throws -> String {
        try client.send(line)
        return try client.readLine() ?? ""
    }

    static func runVerify(_ path: String) throws -> ExitCode {
        let child = try ChildProcess(
            path: ChildProcess.executableDirectory() + "/coexistctl",
            arguments: ["verify", path]
        )
        return child.wait() == 0 ? .success : .failure
    }

    static func makeDirectory() throws -> String {
        var template = Array("/tmp/coexist-demo.XXXXXX".utf8CString)
        guard let result = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw SystemError(call: "mkdtemp", code: errno)
        }
        return String(cString: result)
    }

    static func randomUUID() -> [UInt8] { UUIDText.randomBytes() }
}
