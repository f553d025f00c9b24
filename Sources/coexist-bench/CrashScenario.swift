import CoexistRuntime
import CoexistSQLite

#if canImport(Glibc)
import Glibc
#endif

/// *crash*: a legacy and a new-schema writer (random inserts, updates, deletes, relationship changes and
/// cascades) run on one store while coexistd is killed with SIGKILL at random moments and restarted; when the
/// writers are done and the daemon has caught up: both schemas equal (`coexistctl verify`), every mirror
/// transaction recorded once in `coexist_mirror`, none mirrored back, none parked, the cursor at the end.
enum CrashScenario {
    struct Result: Sendable {
        var rounds: Int
        var sources: Int
        var mirrors: Int
        var mirrorTransactions: Int
        var echoes: Int
        var parked: Int
        var cursorAtEnd: Bool
        var verifyEqual: Bool
        var passed: Bool { mirrors == mirrorTransactions && echoes == 0 && parked == 0 && cursorAtEnd && verifyEqual }
    }

    static func run(modelPath: String, rounds: Int, writes: Int, seed: UInt64) throws -> Result {
        let store = try BenchStore(modelPath: modelPath)
        defer { store.remove() }
        let directory = ChildProcess.executableDirectory()
        try BenchStore.catchUp(store)  // the bridge starts on an empty store, as in a deployment
        let writers = try [("legacy-random", "old"), ("new-random", "new")].enumerated().map { index, writer in
            try ChildProcess(
                path: directory + "/coexist-test-helper",
                arguments: [writer.0, store.path, "\(writes)", writer.1, "\(seed &+ UInt64(index))"],
                quiet: true
            )
        }
        var generator = SystemRandomNumberGenerator()
        for round in 0..<rounds {
            // Every other round the kill may land during start-up (opening, initial checks, binding).
            let daemon = try store.startDaemon(waitForSocket: round % 2 == 0)
            usleep(UInt32.random(in: 1_000...60_000, using: &generator))
            daemon.killNow()
            daemon.wait()
        }
        for writer in writers where writer.wait() != 0 { throw BenchError("a writer failed") }
        try BenchStore.catchUp(store)
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
            mirrorTransactions: try count(byAuthor + " = 'coexistd'"),
            echoes: try count(
                """
                SELECT count(*) FROM coexist_mirror m JOIN ATRANSACTION t ON t.Z_PK = m.source_token
                JOIN ATRANSACTIONSTRING s ON s.Z_PK = t.ZAUTHORTS WHERE s.ZNAME = 'coexistd'
                """
            ),
            parked: try count("SELECT count(*) FROM coexist_parked"),
            cursorAtEnd: try count("SELECT cursor FROM coexist_bridge") == count("SELECT max(Z_PK) FROM ATRANSACTION"),
            verifyEqual: verify.wait() == 0
        )
    }
}
