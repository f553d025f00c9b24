import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import CoexistStore

/// *write overhead*: one-row saves with history through each store against raw SQL inserts of the same
/// rows into the same tables, in one process, in alternating rounds so that machine noise hits every arm.
enum WriteOverheadScenario {
    struct Result: Sendable {
        var side: String
        var raw: Measure.Distribution
        var store: Measure.Distribution
        var ratio: Double { raw.p50 > 0 ? Double(store.p50) / Double(raw.p50) : 0 }
    }

    static func run(modelPath: String, rows: Int, rounds: Int = 5) throws -> [Result] {
        let bench = try BenchStore(modelPath: modelPath)
        defer { bench.remove() }
        let legacy = try LegacyStore(path: bench.path, options: OpenOptions(busyTimeoutMilliseconds: 30_000))
        let new = try NewStore(connection: legacy.connection, model: bench.model)
        let connection = legacy.connection
        let metadata = SaveMetadata(author: "bench", processName: "coexist-bench")
        let taskEntity = try connection.scalar("SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Task'")
        var samples: [String: [Int64]] = [:]
        func timed(_ arm: String, _ body: () throws -> Void) rethrows {
            let start = Measure.now()
            try body()
            samples[arm, default: []].append(Measure.now() - start)
        }
        let perRound = max(1, rows / rounds)
        for _ in 0..<rounds {
            for index in 0..<perRound {
                let created = TransactionWriter.now()
                try timed("legacy-raw") {
                    try connection.write {
                        let key = try connection.scalar(
                            "UPDATE Z_PRIMARYKEY SET Z_MAX = Z_MAX + 1 WHERE Z_ENT = ? RETURNING Z_MAX",
                            [taskEntity]
                        )
                        try connection.run(
                            """
                            INSERT INTO ZTASK (Z_PK, Z_ENT, Z_OPT, ZID, ZTITLE, ZCREATEDAT, ZPRIORITY, ZISCOMPLETED)
                            VALUES (?, ?, 1, ?, ?, ?, 1, 0)
                            """,
                            [
                                key, taskEntity, .blob(BenchStore.randomUUID()), .text("bench \(index)"),
                                .real(created),
                            ]
                        )
                    }
                }
                try timed("legacy-store") {
                    _ = try legacy.save(metadata) { save in
                        _ = try save.insert(
                            "Task",
                            [
                                "id": .uuid(BenchStore.randomUUID()), "title": .string("bench \(index)"),
                                "createdAt": .date(created), "priority": .integer(1), "isCompleted": .boolean(false),
                            ]
                        )
                    }
                }
                try timed("new-raw") {
                    try connection.write {
                        try connection.run(
                            """
                            INSERT INTO task (id, title, created_at, priority, is_completed) VALUES (?, ?, ?, 1, 0)
                            """,
                            [
                                .text(UUIDText.text(BenchStore.randomUUID()) ?? ""), .text("bench \(index)"),
                                .real(created),
                            ]
                        )
                    }
                }
                try timed("new-store") {
                    _ = try new.save(metadata) { save in
                        _ = try save.insert(
                            "Task",
                            [
                                "title": .string("bench \(index)"), "createdAt": .date(created),
                                "priority": .integer(1), "isCompleted": .boolean(false),
                            ]
                        )
                    }
                }
            }
        }
        return ["legacy", "new"].map { side in
            Result(
                side: side,
                raw: Measure.Distribution(samples[side + "-raw"] ?? []),
                store: Measure.Distribution(samples[side + "-store"] ?? [])
            )
        }
    }
}
