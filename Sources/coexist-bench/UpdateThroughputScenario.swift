import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistRuntime
import CoexistSQLite

/// *throughput* of updates: rows already mirrored get a backlog of legacy update transactions (`rows` Task
/// updates each, a new title and priority) written with no daemon running, then `coexistd --once` mirrors
/// all of it; the rate is compared, in the same run, with raw updates of the same rows (by identity, in
/// one transaction) in a fresh store's new-schema table holding them.
enum UpdateThroughputScenario {
    /// The result, `rawSeconds` those of the raw updates (no set-based limit is measured: `limitSeconds` 0).
    typealias Result = ThroughputScenario.Result

    static func run(modelPath: String, rowsPerTransaction: Int, transactions: Int) throws -> Result {
        let (store, legacy, metadata) = try BenchStore.bridged(modelPath: modelPath)
        defer { store.remove() }
        let count = rowsPerTransaction * transactions
        var objects: [(id: ObjectID, uuid: [UInt8])] = []
        for start in stride(from: 0, to: count, by: 1_000) {
            try legacy.save(metadata) { save in
                for index in start..<min(count, start + 1_000) {
                    let uuid = UUIDText.randomBytes()
                    let id = try save.insert(
                        "Task",
                        [
                            "id": .uuid(uuid), "title": .string("bench \(index)"), "createdAt": .date(0),
                            "priority": .integer(1), "isCompleted": .boolean(false),
                        ]
                    )
                    objects.append((id, uuid))
                }
            }
        }
        _ = try store.mirrorOnce()
        for transaction in 0..<transactions {
            try legacy.save(metadata) { save in
                for index in transaction * rowsPerTransaction..<(transaction + 1) * rowsPerTransaction {
                    try save.update(objects[index].id, ["title": .string("updated \(index)"), "priority": .integer(2)])
                }
            }
        }
        let (seconds, peak) = try store.mirrorOnce()
        let mirrored = try legacy.connection.scalar("SELECT count(*) FROM task WHERE priority = 2").integerValue ?? 0
        guard mirrored == Int64(count) else { throw BenchError("\(mirrored) of \(count) updates mirrored") }
        return Result(
            rowsPerTransaction: rowsPerTransaction,
            transactions: transactions,
            seconds: seconds,
            rawSeconds: try rawUpdate(modelPath: modelPath, objects.map { UUIDText.text($0.uuid) ?? "" }),
            limitSeconds: 0,
            peakKilobytes: peak
        )
    }

    /// Seconds to update `ids`' rows (inserted first, not timed) in a fresh store's `task` table, in one
    /// transaction.
    private static func rawUpdate(modelPath: String, _ ids: [String]) throws -> Double {
        let fresh = try BenchStore(modelPath: modelPath)
        defer { fresh.remove() }
        let connection = try Connection(path: fresh.path)
        try connection.write {
            for (index, id) in ids.enumerated() {
                try connection.run(
                    "INSERT INTO task (id, title, created_at, priority, is_completed) VALUES (?, ?, 0, 1, 0)",
                    [.text(id), .text("bench \(index)")]
                )
            }
        }
        let start = Measure.now()
        try connection.write {
            for (index, id) in ids.enumerated() {
                try connection.run(
                    "UPDATE task SET title = ?, priority = 2 WHERE id = ?",
                    [.text("updated \(index)"), .text(id)]
                )
            }
        }
        return Double(Measure.now() - start) / 1e9
    }
}
