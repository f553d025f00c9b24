import CoexistCoreData
import CoexistData
import CoexistDemo
import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import CoexistStore
import Foundation

/// *adapter-fetch*: `rows` of twice as many tasks are fetched with a translated predicate (`priority >= 1`) by
/// each adapter (the new one twice: records with fields, and with plain stored properties), on a new context
/// each round opened before the clock starts, every title read; side by side with the same query in raw SQL
/// decoding each row into a Swift struct of the model's types (the identity a `UUID`, as the records hold
/// it); medians of the rounds and their ratio.
enum AdapterFetchScenario {
    struct Result: Sendable {
        var side: String
        var rows: Int
        var adapter: Int64
        var raw: Int64
        var ratio: Double
    }

    /// One task as raw SQL code would decode it: each attribute of the model's type, as the adapters give it.
    private struct RawTask {
        var title: String
        var notes: String
        var priority: Int
        var isCompleted: Bool
        var createdAt: Date
        var id: UUID?
    }

    /// The demo's task with plain stored properties instead of fields (``DemoTask`` has fields): what a
    /// fetch costs when it sets each attribute through its key path.
    final class PlainTask: PersistentModel {
        var id = UUID()
        var title = ""
        var isCompleted = false
        var createdAt = Date()
        var priority = 0
        var notes = ""
        var category: DemoCategory?
        static let schema = RecordSchema<PlainTask>(
            entity: "Task",
            [
                .attribute("id", \.id), .attribute("title", \.title), .attribute("isCompleted", \.isCompleted),
                .attribute("createdAt", \.createdAt), .attribute("priority", \.priority),
                .attribute("notes", \.notes), .toOne("category", \.category),
            ]
        )
        required init() {}
        required init(backingData: BackingData) { id = backingData.placeholderUUID }
    }

    static func run(modelPath: String, rows: Int, rounds: Int = 7) throws -> [Result] {
        let (store, legacy, metadata) = try BenchStore.bridged(modelPath: modelPath)
        defer { store.remove() }
        _ = try legacy.save(metadata) { save in
            for index in 0..<(rows * 2) {
                _ = try save.insert(
                    "Task",
                    [
                        "id": .uuid(BenchStore.randomUUID()), "title": .string("bench \(index)"),
                        "createdAt": .date(TransactionWriter.now()), "priority": .integer(Int64(index % 2)),
                    ]
                )
            }
        }
        try BenchStore.catchUp(store)
        let connection = legacy.connection
        var samples: [String: [Int64]] = [:]
        func timed(_ arm: String, _ body: () throws -> Int) throws {
            try timed(arm, prepare: {}, { _ in try body() })
        }
        func timed<Prepared>(_ arm: String, prepare: () throws -> Prepared, _ body: (Prepared) throws -> Int) throws {
            let prepared = try prepare()
            let start = Measure.now()
            let count = try body(prepared)
            samples[arm, default: []].append(Measure.now() - start)
            guard count == rows else { throw BenchError("\(arm) fetched \(count) tasks, not \(rows)") }
        }
        for _ in 0..<rounds {
            try timed("legacy-raw") {
                try rawTasks(
                    connection,
                    "SELECT ZTITLE, ZNOTES, ZPRIORITY, ZISCOMPLETED, ZCREATEDAT, ZID FROM ZTASK WHERE ZPRIORITY >= ?"
                )
            }
            try timed(
                "legacy-adapter",
                prepare: { try ManagedObjectContext(storeAt: store.path, modelAt: modelPath, readOnly: true) }
            ) { context in
                let request = FetchRequest<ManagedObject>(entityName: "Task")
                request.predicate = try FetchPredicate(format: "priority >= %@", 1)
                let tasks = try context.fetch(request)
                return tasks.filter { $0.value(forKey: "title") is String }.count
            }
            try timed("new-raw") {
                try rawTasks(
                    connection,
                    "SELECT title, notes, priority, is_completed, created_at, id FROM task WHERE priority >= ?"
                )
            }
            try timed("new-adapter", prepare: { try ModelContext(try NewStore(path: store.path, model: store.model)) })
            {
                context in
                let tasks = try context.fetch(FetchDescriptor<DemoTask>(predicate: #Predicate { $0.priority >= 1 }))
                return tasks.filter { !$0.title.isEmpty }.count
            }
            try timed(
                "new-plain-adapter",
                prepare: { try ModelContext(try NewStore(path: store.path, model: store.model)) }
            ) { context in
                let tasks = try context.fetch(FetchDescriptor<PlainTask>(predicate: #Predicate { $0.priority >= 1 }))
                return tasks.filter { !$0.title.isEmpty }.count
            }
        }
        return ["legacy", "new", "new-plain"].map { side in
            let adapter = Measure.median(samples[side + "-adapter"] ?? [])
            let raw = Measure.median(samples[(side == "new-plain" ? "new" : side) + "-raw"] ?? [])
            return Result(
                side: side,
                rows: rows,
                adapter: adapter,
                raw: raw,
                ratio: Double(adapter) / Double(max(1, raw))
            )
        }
    }

    /// The UUID of 16 bytes.
    private static func uuid(_ bytes: [UInt8]) -> UUID? {
        bytes.count == 16 ? UUID(uuid: bytes.withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) }) : nil
    }

    /// The rows of `sql` (with 1 bound), each decoded into a ``RawTask``: how many.
    private static func rawTasks(_ connection: Connection, _ sql: String) throws -> Int {
        var tasks: [RawTask] = []
        try connection.forEachRow(sql, [.integer(1)]) { row in
            // The new schema stores a UUID's text, parsed as the adapter parses it (Foundation's
            // `UUID(uuidString:)` costs more than the rest of the row); Core Data its 16 bytes.
            let id: UUID? =
                if let parsed = row.withText(5, UUIDText.bytes(utf8:)) {
                    parsed.flatMap(uuid)
                } else if case .blob(let bytes) = row[5] {
                    uuid(bytes)
                } else {
                    nil
                }
            tasks.append(
                RawTask(
                    title: row[0].textValue ?? "",
                    notes: row[1].textValue ?? "",
                    priority: Int(row[2].integerValue ?? 0),
                    isCompleted: row[3].integerValue == 1,
                    createdAt: Date(timeIntervalSinceReferenceDate: row[4].numericValue ?? 0),
                    id: id
                )
            )
        }
        return tasks.filter { !$0.title.isEmpty }.count
    }
}
