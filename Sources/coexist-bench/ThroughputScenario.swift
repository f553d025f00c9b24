import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistRuntime
import CoexistSQLite

/// *throughput* and *catch-up*: a backlog of legacy transactions (`rows` Task inserts each) is written with
/// no daemon running, then `coexistd --once` mirrors all of it; the rate is compared, in the same run, with
/// raw batched inserts of the same rows into the same new-schema table in a fresh store, and with the
/// set-based limit: one `INSERT … SELECT` of the same rows from the legacy table into a copy of the
/// new-schema table in the same file (UUID blob to text with `lower(hex())`), which no mirror can beat.
enum ThroughputScenario {
    struct Result: Sendable {
        var rowsPerTransaction: Int
        var transactions: Int
        var seconds: Double
        var rawSeconds: Double
        var limitSeconds: Double
        var peakKilobytes: Int
        var changes: Int { rowsPerTransaction * transactions }
        var rate: Double { seconds > 0 ? Double(changes) / seconds : 0 }
        var rawRate: Double { rawSeconds > 0 ? Double(changes) / rawSeconds : 0 }
        var ratio: Double { rawRate > 0 ? rate / rawRate : 0 }
        var limitRate: Double { limitSeconds > 0 ? Double(changes) / limitSeconds : 0 }
        var limitRatio: Double { rawRate > 0 ? limitRate / rawRate : 0 }
    }

    static func run(modelPath: String, rowsPerTransaction: Int, transactions: Int) throws -> Result {
        let (store, legacy, metadata) = try BenchStore.bridged(modelPath: modelPath)
        defer { store.remove() }
        var rows: [(id: [UInt8], title: String, created: Double)] = []
        for transaction in 0..<transactions {
            let batch = (0..<rowsPerTransaction).map { index in
                (UUIDText.randomBytes(), "bench \(transaction).\(index)", TransactionWriter.now())
            }
            try legacy.save(metadata) { save in
                for row in batch {
                    _ = try save.insert(
                        "Task",
                        [
                            "id": .uuid(row.0), "title": .string(row.1), "createdAt": .date(row.2),
                            "priority": .integer(1), "isCompleted": .boolean(false),
                        ]
                    )
                }
            }
            rows += batch
        }
        let (seconds, peak) = try store.mirrorOnce()
        let mirrored = try legacy.connection.scalar("SELECT count(*) FROM task").integerValue ?? 0
        guard mirrored == Int64(rows.count) else { throw BenchError("\(mirrored) of \(rows.count) rows mirrored") }
        return Result(
            rowsPerTransaction: rowsPerTransaction,
            transactions: transactions,
            seconds: seconds,
            rawSeconds: try rawInsert(modelPath: modelPath, rows),
            limitSeconds: try setBasedLimit(legacy.connection),
            peakKilobytes: peak
        )
    }

    /// Seconds to insert `rows` into a fresh store's `task` table in one transaction.
    private static func rawInsert(
        modelPath: String,
        _ rows: [(id: [UInt8], title: String, created: Double)]
    ) throws -> Double {
        let fresh = try BenchStore(modelPath: modelPath)
        defer { fresh.remove() }
        let connection = try Connection(path: fresh.path)
        let start = Measure.now()
        try connection.write {
            for row in rows {
                try connection.run(
                    "INSERT INTO task (id, title, created_at, priority, is_completed) VALUES (?, ?, ?, 1, 0)",
                    [.text(UUIDText.text(row.id) ?? ""), .text(row.title), .real(row.created)]
                )
            }
        }
        return Double(Measure.now() - start) / 1e9
    }

    /// Seconds of one `INSERT … SELECT` of every `ZTASK` row into a copy of the `task` table (same columns,
    /// keys and indexes), converting as the mirror must; the copy is dropped afterwards.
    private static func setBasedLimit(_ connection: Connection) throws -> Double {
        let rows = try connection.rows("SELECT sql FROM sqlite_master WHERE tbl_name = 'task' AND sql IS NOT NULL")
        let statements = rows.compactMap { row -> String? in
            row.first?.textValue?.replacing("\"task_", with: "\"task_limit_")
                .replacing("\"task\"", with: "\"task_limit\"")
        }
        guard statements.count == rows.count, !statements.isEmpty else {
            throw BenchError("no task table to copy")
        }
        try connection.write { for statement in statements { try connection.execute(statement) } }
        defer { try? connection.execute("DROP TABLE task_limit") }
        let uuid =
            "lower(substr(hex(ZID), 1, 8) || '-' || substr(hex(ZID), 9, 4) || '-' || substr(hex(ZID), 13, 4) || "
            + "'-' || substr(hex(ZID), 17, 4) || '-' || substr(hex(ZID), 21))"
        let start = Measure.now()
        try connection.write {
            try connection.execute(
                "INSERT INTO task_limit (id, title, created_at, priority, is_completed) "
                    + "SELECT \(uuid), ZTITLE, ZCREATEDAT, ZPRIORITY, ZISCOMPLETED FROM ZTASK"
            )
        }
        return Double(Measure.now() - start) / 1e9
    }
}
