import CoexistRuntime
import CoexistSQLite
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// *crash*: a legacy and a new-schema writer (random inserts, updates, deletes, relationship changes and
/// cascades) run on one store while coexistd is killed with SIGKILL at random moments and restarted; when the
/// writers are done and the daemon has caught up: both schemas equal (`coexistctl verify`), every source
/// transaction recorded at most once in `coexist_mirror` (its primary key) and every mirror transaction there
/// (a pass mirrors the transactions it takes in one save per side), none mirrored back, none parked, the
/// cursor at the end.
enum CrashScenario {
    struct Result: Sendable {
        var rounds: Int
        var sources: Int
        var mirrors: Int
        var mirrorTokens: Int
        var mirrorTransactions: Int
        var echoes: Int
        var parked: Int
        /// Park reports in the daemons' logs (transactions and objects), retried or not.
        var everParked: Int
        var cursorAtEnd: Bool
        var verifyEqual: Bool
        var passed: Bool {
            mirrorTokens == mirrorTransactions && mirrors <= sources && echoes == 0 && parked == 0 && everParked == 0
                && cursorAtEnd && verifyEqual
        }
    }

    /// Runs the harness on a fresh store of the model at `modelPath`, or on a copy of the Core Data store at
    /// `storePath`. The demo model gets the random writers; CoreDataPlus `SampleModel` (Person, Car) the
    /// writers that also move unique values between objects.
    static func run(modelPath: String, storePath: String?, rounds: Int, writes: Int, seed: UInt64) throws -> Result {
        let store = try storePath.map { try BenchStore(copying: $0) } ?? BenchStore(modelPath: modelPath)
        defer { store.remove() }
        let directory = ChildProcess.executableDirectory()
        let kind: String
        if store.model.entity(named: "Person") != nil && store.model.entity(named: "Car") != nil {
            kind = "sample"
        } else if store.model.entity(named: "Task") != nil && store.model.entity(named: "Category") != nil {
            kind = "random"
        } else {
            throw BenchError("crash runs on the demo model or on CoreDataPlus SampleModel")
        }
        try BenchStore.catchUp(store)  // the bridge starts on a store it never ran on, as in a deployment
        // Every daemon's warnings: a transaction or object parked at any moment is a failure, even when a
        // retry mirrored it later.
        let log = store.directory + "/coexistd.log"
        let writers = try [("legacy-" + kind, "old"), ("new-" + kind, "new")].enumerated().map { index, writer in
            try ChildProcess(
                path: directory + "/coexist-test-helper",
                arguments: [writer.0, store.path, "\(writes)", writer.1, "\(seed &+ UInt64(index))"],
                quiet: true
            )
        }
        var generator = SystemRandomNumberGenerator()
        do {
            for round in 0..<rounds {
                // Every other round the kill may land during start-up (opening, initial checks, binding).
                let daemon = try store.startDaemon(waitForSocket: round % 2 == 0, errorLog: log)
                usleep(UInt32.random(in: 1_000...60_000, using: &generator))
                daemon.killNow()
                daemon.wait()
            }
            for writer in writers where writer.wait() != 0 { throw BenchError("a writer failed") }
            try BenchStore.catchUp(store, errorLog: log)
        } catch {
            // What the daemons said (their warnings and errors go to the log): the reason a start failed.
            for line in (Measure.readFile(log) ?? "").split(separator: "\n").suffix(5) {
                StandardStreams.error("coexist-bench: coexistd: \(line)")
            }
            throw error
        }
        let verify = try ChildProcess(path: directory + "/coexistctl", arguments: ["verify", store.path], quiet: true)
        let connection = try Connection(path: store.path, options: OpenOptions(access: .readOnly))
        func count(_ sql: String) throws -> Int { Int(try connection.scalar(sql).integerValue ?? -1) }
        let byAuthor = """
            SELECT count(*) FROM ATRANSACTION t JOIN ATRANSACTIONSTRING s ON s.Z_PK = t.ZAUTHORTS WHERE s.ZNAME
            """
        return Result(
            rounds: rounds,
            sources: try count(byAuthor + " IN ('old', 'new')"),
            mirrors: try count("SELECT count(*) FROM coexist_mirror"),
            mirrorTokens: try count("SELECT count(DISTINCT mirror_token) FROM coexist_mirror"),
            mirrorTransactions: try count(
                byAuthor + " = 'coexistd' AND coalesce((SELECT c.ZNAME FROM ATRANSACTIONSTRING c WHERE c.Z_PK = "
                    + "t.ZCONTEXTNAMETS), '') != 'initial sync'"
            ),
            echoes: try count(
                """
                SELECT count(*) FROM coexist_mirror m JOIN ATRANSACTION t ON t.Z_PK = m.source_token
                JOIN ATRANSACTIONSTRING s ON s.Z_PK = t.ZAUTHORTS WHERE s.ZNAME = 'coexistd'
                """
            ),
            parked: try count("SELECT count(*) FROM coexist_parked"),
            everParked: Self.parkReports(log),
            cursorAtEnd: try count("SELECT cursor FROM coexist_bridge") == count("SELECT max(Z_PK) FROM ATRANSACTION"),
            verifyEqual: verify.wait() == 0
        )
    }

    /// The lines of `log` that report a park (the first few are printed on standard error).
    static func parkReports(_ log: String) -> Int {
        guard let data = FileManager.default.contents(atPath: log) else { return 0 }
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n").filter { $0.contains(" parked: ") }
        for line in lines.prefix(5) { StandardStreams.error("coexist-bench: \(line)") }
        return lines.count
    }
}
