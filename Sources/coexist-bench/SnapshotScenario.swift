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
            // Rows straight into the new schema's table, one statement: the scenario measures reading.
            try connection.write {
                try connection.run(
                    """
                    WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < ?1)
                    INSERT INTO task (id, created_at, is_completed, notes, priority, title)
                    SELECT lower(printf('%s-%s-4%s-8%s-%s', hex(randomblob(4)), hex(randomblob(2)),
                           substr(hex(randomblob(2)), 2), substr(hex(randomblob(2)), 2), hex(randomblob(6)))),
                           7.5e8 + x, x % 2, '', x % 10, 'task ' || x FROM n
                    """,
                    [.integer(Int64(rows))]
                )
            }
            _ = try connection.checkpoint()

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
