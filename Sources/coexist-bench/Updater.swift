import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import CoexistStore

#if canImport(Glibc)
import Glibc
#endif

/// The writer process of the adapter latency scenario: `coexist-bench updater legacy|new STORE COUNT RATE OUT KEY`.
///
/// Commits COUNT one-row transactions at RATE per second on one side, scheduled on the clock, each setting
/// the title of one task (KEY: its `Z_PK` on the legacy side, its `id` on the new side) to "v<i>"; then
/// writes "i commit-time-ns save-ns" per transaction to OUT. The commit time is taken as the save returns;
/// the save's time includes the checkpoint an app's connection runs in its commit past 1,000 WAL pages.
enum Updater {
    static func run(side: String, path: String, count: Int, rate: Int, output: String, key: String) throws {
        let options = OpenOptions(busyTimeoutMilliseconds: 30_000)
        let metadata = SaveMetadata(author: "bench-\(side)", processName: "coexist-bench")
        let legacy = try LegacyStore(path: path, options: options)
        legacy.connection.manageCheckpoints()
        guard let model = legacy.model else { throw BenchError("the store has no model") }
        let store = side == "new" ? try NewStore(connection: legacy.connection, model: model) : nil
        var commits: [(Int64, Int64, Int64)] = []
        commits.reserveCapacity(count)
        let interval = 1_000_000_000 / Int64(max(1, rate))
        let start = Measure.now() + 50_000_000
        for index in 0..<count {
            Measure.sleep(until: start + Int64(index) * interval)
            let title: [String: AttributeValue] = ["title": .string("v\(index)")]
            let began = Measure.now()
            if let store {
                _ = try store.save(metadata) { save in try save.update(ObjectRef(entity: "Task", id: key), title) }
            } else {
                guard let pk = Int64(key) else { throw BenchError("KEY is a Z_PK on the legacy side") }
                _ = try legacy.save(metadata) { save in try save.update(ObjectID(entity: "Task", pk: pk), title) }
            }
            let committed = legacy.connection.lastCommitTime
            try checkpointLikeAnApp(legacy.connection)
            commits.append((Int64(index), committed, Measure.now() - began))
        }
        let text = commits.map { "\($0.0) \($0.1) \($0.2)\n" }.joined()
        guard let file = fopen(output, "w") else { throw BenchError("cannot write \(output)") }
        defer { fclose(file) }
        fputs(text, file)
    }
}
