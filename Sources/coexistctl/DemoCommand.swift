import CoexistCoreData
import CoexistData
import CoexistDemo
import CoexistLegacyStore
import CoexistModel
import CoexistProtocol
import CoexistRuntime
import CoexistStore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `coexistctl demo`: the main job on an embedded default. Creates a demo store from the demo model (both
/// schemas), starts coexistd on it, and has two apps take turns, each on its adapter (the Core Data-shaped
/// and the SwiftData-shaped one: the examples of both): after each save, once coexistd has mirrored it, the
/// other app merges and prints what it now sees, the Core Data app through objects it already holds.
enum DemoCommand: Subcommand {
    static let name = "demo"
    static let summary = "run coexistd on a demo store with a writer on each side, printing the changes flowing"
    static let spec = CommandSpec(
        command: "coexistctl demo",
        synopsis: ["[--model PATH] [--directory DIR] [--steps N]"],
        description: """
            Creates a fresh store from the demo Task/Category model (config/TaskModel.xcdatamodeld, carried in
            coexistctl: it runs from any folder), with the Core Data tables and the new schema; starts coexistd
            on it (the daemon next to coexistctl); then a legacy writer and a new-schema writer take turns, and
            after each write the other side's view is printed once the bridge has mirrored it (long lists
            summarised). Ends with coexistd's status and coexistctl verify's result.
            """,
        options: [
            .value("model", "PATH", "the model (default: the demo model, written into the demo's folder)"),
            .value(
                "directory",
                "DIR",
                "where to create the store and the socket, made when missing (default: a new folder under /tmp)"
            ),
            .value("steps", "N", "rounds of writes (default 3)"),
        ]
    )

    static func run(_ arguments: [String]) throws -> ExitCode {
        let parsed = try Help.parse(self, arguments)
        _ = try parsed.positionals(min: 0, max: 0)
        let steps = try parsed.integer("steps", in: 1...10_000, default: 3)
        let directory = try parsed.option("directory") ?? makeDirectory()
        do {
            try FileManager.default.createDirectory(
                atPath: directory,
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
        } catch {
            throw SystemError(call: "mkdir", code: EIO, subject: directory, detail: "cannot make it: \(error)")
        }
        let modelPath = try parsed.option("model") ?? DemoModel.write(into: directory)
        let model = try XCDataModelReader.read(path: modelPath)
        let path = directory + "/Demo.sqlite"
        for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
        _ = try StoreCreator.create(path: path, model: model)
        let new = try NewStore(path: path, model: model)
        try new.createSchema()
        StandardStreams.out(
            "demo store  \(path)\nmodel       \(modelPath) (version \(model.versionIdentifiers.joined()))"
        )

        let socket = directory + "/coexist.sock"
        let daemon = try ChildProcess(
            path: ChildProcess.executableDirectory() + "/coexistd",
            arguments: [
                "--config", "/dev/null", "--database", path, "--socket", socket, "--poll-interval", "250ms",
                "--log-level", "notice",
            ]
        )
        defer {
            daemon.terminate()
            daemon.wait()
        }
        let client = try LineClient(path: socket)
        StandardStreams.out("coexistd    pid \(daemon.pid), socket \(socket)\n")
        // The two apps, each on its adapter: the Core Data one and the SwiftData one.
        let legacyApp = try ManagedObjectContext(storeAt: path, modelAt: modelPath)
        legacyApp.transactionAuthor = "legacy-app"
        let newApp = try ModelContainer(
            configuration: ModelConfiguration(
                url: URL(fileURLWithPath: path),
                modelURL: URL(fileURLWithPath: modelPath),
                author: "new-app"
            )
        ).mainContext
        var errands: ManagedObject?
        var newTasks: [DemoTask] = []
        var held: [ManagedObject] = []
        for step in 1...steps {
            if errands == nil {
                let category = legacyApp.insertNewObject(forEntityName: "Category")
                category.setValue(UUID(), forKey: "id")
                category.setValue("Errands", forKey: "name")
                errands = category
            }
            let task = legacyApp.insertNewObject(forEntityName: "Task")
            task.setValue(UUID(), forKey: "id")
            task.setValue("Legacy task \(step)", forKey: "title")
            task.setValue(Date(), forKey: "createdAt")
            task.setValue(errands, forKey: "category")
            let legacyToken = try legacyApp.save() ?? 0
            StandardStreams.out("legacy  ▶ token \(legacyToken): inserted Task \"Legacy task \(step)\" into Errands")
            try Coexistd.waitUntilMirrored(through: legacyToken, socket: socket)
            let mirrored = try newApp.mergeChangesFromStore().map(\.token)
            let tasks = try newApp.fetch(FetchDescriptor<DemoTask>())
            StandardStreams.out(
                "new     ◀ token \(summary(mirrored.map(String.init))) (coexistd), the new app's tasks: "
                    + summary(tasks.map { "\"\($0.title)\" (\($0.category?.name ?? "-"))" })
            )

            let newTask = DemoTask(title: "New task \(step)")
            newApp.insert(newTask)
            newTasks.append(newTask)
            newTasks[0].priority = step
            newTasks[0].isCompleted = step % 2 == 0
            let newToken = try newApp.save() ?? 0
            StandardStreams.out(
                "new     ▶ token \(newToken): inserted Task \"New task \(step)\", set priority \(step) on \"New task 1\""
            )
            try Coexistd.waitUntilMirrored(through: newToken, socket: socket)
            // The legacy app holds the new app's tasks from when they first arrived: they follow, unfetched.
            let changes = try legacyApp.mergeChangesFromStore()
            for id in changes.flatMap(\.inserted) where id.entityName == "Task" {
                held.append(try legacyApp.existingObject(with: id))
            }
            StandardStreams.out(
                "legacy  ◀ token \(summary(changes.map { String($0.token) })) (coexistd), held: "
                    + summary(
                        held.map { object in
                            let priority = object.value(forKey: "priority") as? Int16 ?? 0
                            let title = object.value(forKey: "title") as? String ?? ""
                            return "\"\(title)\" priority \(priority) Z_OPT \(object.version)"
                        }
                    ) + "\n"
            )
        }
        let status = try request(client, EventRequest("status").text)
        let decoded = try? JSONDecoder().decode(StatusCommand.Status.self, from: Data(status.utf8))
        StandardStreams.out("coexistd    " + (decoded.map(StatusCommand.text) ?? status))
        StandardStreams.out("verify      coexistctl verify \(path)")
        return try runVerify(path)
    }

    /// `items` joined, the first three and the last two when there are more than six (`… 294 more …`), so
    /// that a long demo prints lines a terminal can show.
    static func summary(_ items: [String]) -> String {
        guard items.count > 6 else { return items.joined(separator: ", ") }
        let hidden = items.count - 5
        return (items.prefix(3) + ["… \(hidden) more …"] + items.suffix(2)).joined(separator: ", ")
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

}
