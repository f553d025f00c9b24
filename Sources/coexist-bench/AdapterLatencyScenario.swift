import CoexistCoreData
import CoexistData
import CoexistDemo
import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistRuntime
import CoexistStore
import Dispatch
import Foundation

/// *adapter-latency*: a writer process sets the title of one task at a fixed rate; this process holds that
/// task in a context following the file and measures commit → the held object shows the new title (the
/// first read of it after the notification that brought it; a value shown covers every commit up to it).
/// Without coexistd each stack follows its own writer through the file; through coexistd each follows the
/// other stack's writer, mirrored, through the socket.
enum AdapterLatencyScenario {
    struct Result: Sendable {
        var label: String
        var shown: Measure.Distribution
        /// The writer's saves, each with the checkpoint its connection runs in the commit past 1,000 pages.
        var save: Measure.Distribution
        var missing: Int
    }

    /// Which adapter holds the task, where it learns of commits, and which side writes.
    struct Case {
        var label: String
        var writer: String
        var coreData: Bool
        var source: CommitSource
    }

    static func run(modelPath: String, count: Int, rate: Int) throws -> [Result] {
        var results: [Result] = []
        let store = try BenchStore(modelPath: modelPath)
        defer { store.remove() }
        // Without coexistd: the task exists on each side on its own, never mirrored.
        let keys = try insertHeld(store, modelPath: modelPath, newSideToo: true)
        for item in [
            Case(label: "legacy commit → Core Data context (file)", writer: "legacy", coreData: true, source: .file),
            Case(label: "new commit → SwiftData context (file)", writer: "new", coreData: false, source: .file),
        ] {
            results.append(try measure(item, store: store, modelPath: modelPath, keys: keys, count: count, rate: rate))
        }
        try BenchStore.withDaemon(modelPath: modelPath) { store, _ in
            let keys = try insertHeld(store, modelPath: modelPath, newSideToo: false)
            let socket = CommitSource.coexistd(socket: store.socket)
            for item in [
                Case(label: "new commit → Core Data context (coexistd)", writer: "new", coreData: true, source: socket),
                Case(
                    label: "legacy commit → SwiftData context (coexistd)",
                    writer: "legacy",
                    coreData: false,
                    source: socket
                ),
            ] {
                results.append(
                    try measure(item, store: store, modelPath: modelPath, keys: keys, count: count, rate: rate)
                )
            }
        }
        return results
    }

    /// The held task: saved through the Core Data adapter (and mirrored, with coexistd running), or saved
    /// on each side on its own. Its `Z_PK` and new-side `id`.
    private static func insertHeld(
        _ store: BenchStore,
        modelPath: String,
        newSideToo: Bool
    ) throws -> (pk: String, id: String) {
        let context = try ManagedObjectContext(storeAt: store.path, modelAt: modelPath)
        let id = UUID()
        let task = context.insertNewObject(forEntityName: "Task")
        task.setValue(id, forKey: "id")
        task.setValue("held", forKey: "title")
        task.setValue(Date(), forKey: "createdAt")
        let token = try context.save() ?? 0
        let pk = String(task.objectID.uriRepresentation().lastPathComponent.dropFirst())
        if newSideToo {
            let data = try ModelContext(try NewStore(path: store.path, model: store.model))
            let record = DemoTask(title: "held")
            record.id = id
            data.insert(record)
            try data.save()
        } else {
            try Coexistd.waitUntilMirrored(through: token, socket: store.socket)
        }
        return (pk, id.uuidString.lowercased())
    }

    private static func measure(
        _ item: Case,
        store: BenchStore,
        modelPath: String,
        keys: (pk: String, id: String),
        count: Int,
        rate: Int
    ) throws -> Result {
        let output = store.directory + "/updates-\(item.writer)"
        let seen = try blocking {
            try await follow(
                item,
                store: store,
                modelPath: modelPath,
                keys: keys,
                count: count,
                rate: rate,
                output: output
            )
        }
        var commits: [Int: Int64] = [:]
        var saves: [Int64] = []
        for line in (Measure.readFile(output) ?? "").split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count == 3, let index = Int(fields[0]), let time = Int64(fields[1]), let save = Int64(fields[2]) {
                commits[index] = time
                saves.append(save)
            }
        }
        // A value shown at t shows every commit up to it: each commit takes the earliest such t.
        var earliest = Int64.max
        var shownAt: [Int: Int64] = [:]
        for index in (0..<count).reversed() {
            if let time = seen[index] { earliest = min(earliest, time) }
            if earliest != .max { shownAt[index] = earliest }
        }
        var samples: [Int64] = []
        for (index, committed) in commits {
            if let shown = shownAt[index] { samples.append(max(0, shown - committed)) }
        }
        return Result(
            label: item.label,
            shown: Measure.Distribution(samples),
            save: Measure.Distribution(saves),
            missing: count - samples.count
        )
    }

    /// Holds the task, starts the writer, and records when each title was first read after a notification.
    private static func follow(
        _ item: Case,
        store: BenchStore,
        modelPath: String,
        keys: (pk: String, id: String),
        count: Int,
        rate: Int,
        output: String
    ) async throws -> [Int: Int64] {
        let read: () -> String?
        let stop: StoreWatcher
        var next: () async throws -> Bool
        if item.coreData {
            let context = try ManagedObjectContext(storeAt: store.path, modelAt: modelPath)
            let uri = URL(string: "x-coredata://\(context.storeIdentifier)/Task/p\(keys.pk)")
            guard let uri, let id = context.managedObjectID(forURIRepresentation: uri) else {
                throw BenchError("no held task")
            }
            let held = try context.existingObject(with: id)
            read = { held.value(forKey: "title") as? String }
            let changes = try context.remoteChanges(from: item.source)
            stop = changes.watcher
            var iterator = changes.makeAsyncIterator()
            next = { try await iterator.next() != nil }
        } else {
            let context = try ModelContext(try NewStore(path: store.path, model: store.model))
            let identifier = PersistentIdentifier(entityName: "Task", id: keys.id)
            guard let held = try context.model(for: identifier, as: DemoTask.self) else {
                throw BenchError("no held record")
            }
            read = { held.title }
            let changes = try context.remoteChanges(from: item.source)
            stop = changes.watcher
            var iterator = changes.makeAsyncIterator()
            next = { try await iterator.next() != nil }
        }
        let key = item.writer == "legacy" ? keys.pk : keys.id
        let writer = try ChildProcess(
            path: ChildProcess.executableDirectory() + "/coexist-bench",
            arguments: ["updater", item.writer, store.path, "\(count)", "\(rate)", output, key]
        )
        let deadline = Task {
            try await Task.sleep(for: .seconds(count / max(rate, 1) + 30))
            stop.stop()
        }
        var seen: [Int: Int64] = [:]
        while try await next() {
            let now = Measure.now()
            guard let title = read(), title.hasPrefix("v"), let index = Int(title.dropFirst()) else { continue }
            if seen[index] == nil { seen[index] = now }
            if index == count - 1 { break }
        }
        deadline.cancel()
        stop.stop()
        guard writer.wait() == 0 else { throw BenchError("the \(item.writer) updater failed") }
        return seen
    }
}

/// The result of an asynchronous body, handed to the thread waiting for it.
private final class Outcome<T>: @unchecked Sendable {
    var value: Swift.Result<T, any Error>?
}

/// Runs `body` to completion from synchronous code.
func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let outcome = Outcome<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        do { outcome.value = .success(try await body()) } catch { outcome.value = .failure(error) }
        done.signal()
    }
    done.wait()
    guard let value = outcome.value else { throw BenchError("the measurement did not finish") }
    return try value.get()
}
