import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import CoexistStore

#if canImport(Glibc)
import Glibc
#endif

/// The writer process of the latency and fan-out scenarios:
/// `coexist-bench writer legacy|new STORE COUNT RATE OUT [ROWS]`.
///
/// Commits COUNT transactions of ROWS inserted Tasks each (default 1) at RATE per second on one side,
/// scheduled on the clock (a late commit does not shift the next), and writes "token commit-time-ns" per
/// transaction to OUT once done, so that file I/O stays out of the measured loop. The commit time is taken
/// as the save returns; the WAL checkpoint an app's connection runs inside such a commit (past 1,000 pages)
/// is run right after instead, so that it does not count as delivery latency.
enum Writer {
    static func run(side: String, path: String, count: Int, rate: Int, output: String, rows: Int = 1) throws {
        let options = OpenOptions(busyTimeoutMilliseconds: 30_000)
        let metadata = SaveMetadata(author: "bench-\(side)", processName: "coexist-bench")
        var commits: [(Int64, Int64)] = []
        commits.reserveCapacity(count)
        let interval = 1_000_000_000 / Int64(max(1, rate))
        let start = Measure.now() + 50_000_000
        func row(_ index: Int) -> [String: AttributeValue] {
            ["title": .string("bench \(index)"), "createdAt": .date(TransactionWriter.now()), "priority": .integer(1)]
        }
        if side == "legacy" {
            let store = try LegacyStore(path: path, options: options)
            store.connection.manageCheckpoints()
            for index in 0..<count {
                Measure.sleep(until: start + Int64(index) * interval)
                let result = try store.save(metadata) { save in
                    for _ in 0..<rows {
                        var values = row(index)
                        values["id"] = .uuid(BenchStore.randomUUID())
                        _ = try save.insert("Task", values)
                    }
                }
                commits.append((result.token ?? 0, store.connection.lastCommitTime))
                try checkpointLikeAnApp(store.connection)
            }
        } else {
            let legacy = try LegacyStore(path: path, options: options)
            legacy.connection.manageCheckpoints()
            guard let model = legacy.model else { throw BenchError("the store has no model") }
            let store = try NewStore(connection: legacy.connection, model: model)
            for index in 0..<count {
                Measure.sleep(until: start + Int64(index) * interval)
                let result = try store.save(metadata) { save in
                    for _ in 0..<rows { _ = try save.insert("Task", row(index)) }
                }
                commits.append((result.token ?? 0, legacy.connection.lastCommitTime))
                try checkpointLikeAnApp(legacy.connection)
            }
        }
        let text = commits.map { "\($0.0) \($0.1)\n" }.joined()
        guard let file = fopen(output, "w") else { throw BenchError("cannot write \(output)") }
        defer { fclose(file) }
        fputs(text, file)
    }
}

/// SQLite's auto-checkpoint rule (past 1,000 WAL pages), applied after the commit time was taken.
func checkpointLikeAnApp(_ connection: Connection) throws {
    if connection.walFrames >= 1_000 { try connection.checkpoint() }
}

/// A benchmark failure, with what went wrong.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
