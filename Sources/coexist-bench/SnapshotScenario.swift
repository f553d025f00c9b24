import CoexistProtocol
import CoexistRuntime
import CoexistSQLite

/// *snapshot*: a subscriber with `"since":"snapshot"` reads `rows` tasks from coexistd (row messages to
/// `end_of_snapshot`), side by side with the same rows read by raw SQL in the benchmark's process: rows per
/// second of each.
enum SnapshotScenario {
    struct Result: Sendable {
        var rows: Int
        var snapshotSeconds: Double
        var rawSeconds: Double
    }

    static func run(modelPath: String, rows: Int) throws -> Result {
        try BenchStore.withDaemon(modelPath: modelPath) { store, _ in
            let connection = try Connection(path: store.path)
            try BenchStore.insertNewTasks(rows, connection)

            let rawStart = Measure.now()
            var raw = 0
            try connection.forEachRow("SELECT id, created_at, is_completed, notes, priority, title FROM task") { row in
                if row[0].textValue != nil { raw += 1 }
            }
            let rawSeconds = Double(Measure.now() - rawStart) / 1e9

            let client = try LineClient(path: store.socket)
            let start = Measure.now()
            try client.send(EventRequest("subscribe", since: .snapshot, entities: ["Task"]).text)
            var received = 0
            var ended = false
            while let line = try client.readLine() {
                if line.hasPrefix(#"{"type":"row""#) {
                    received += 1
                } else if line.hasPrefix(#"{"type":"end_of_snapshot""#) {
                    ended = true
                    break
                } else if line.hasPrefix(#"{"type":"error""#) {
                    throw BenchError("the snapshot failed: \(line)")
                }
            }
            let seconds = Double(Measure.now() - start) / 1e9
            guard ended, received == rows, raw == rows else {
                throw BenchError("the snapshot sent \(received) rows of \(rows) (raw SQL read \(raw))")
            }
            return Result(rows: rows, snapshotSeconds: seconds, rawSeconds: rawSeconds)
        }
    }
}
