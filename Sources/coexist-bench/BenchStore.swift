import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistProtocol
import CoexistRuntime
import CoexistSQLite
import CoexistStore
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// A fresh demo-model store in a temporary directory, and a coexistd running on it.
struct BenchStore {
    let directory: String
    let path: String
    let socket: String
    let model: Model

    /// A new temporary directory.
    private static func makeDirectory() throws -> String {
        var template = Array("/tmp/coexist-bench.XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw SystemError(call: "mkdtemp", code: errno)
        }
        return String(cString: made)
    }

    /// Creates the store with both schemas.
    init(modelPath: String) throws {
        model = try XCDataModelReader.read(path: modelPath)
        directory = try Self.makeDirectory()
        path = directory + "/Bench.sqlite"
        socket = directory + "/coexist.sock"
        _ = try StoreCreator.create(path: path, model: model)
        try NewStore(path: path, model: model).createSchema()
    }

    /// A copy of the Core Data store at `storePath` (with its own model) in a temporary directory: the
    /// original is only read.
    init(copying storePath: String) throws {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: storePath))
        directory = try Self.makeDirectory()
        path = directory + "/Bench.sqlite"
        socket = directory + "/coexist.sock"
        try bytes.write(to: URL(fileURLWithPath: path))
        guard let model = try LegacyStore(path: path).model else {
            throw BenchError("\(storePath): the store carries no model")
        }
        self.model = model
    }

    /// Runs `body` with a fresh store and a coexistd on it; stops the daemon and removes the store after.
    static func withDaemon<T>(modelPath: String, _ body: (BenchStore, ChildProcess) throws -> T) throws -> T {
        let store = try BenchStore(modelPath: modelPath)
        defer { store.remove() }
        let daemon = try store.startDaemon()
        defer {
            daemon.terminate()
            daemon.wait()
        }
        return try body(store, daemon)
    }

    /// Inserts `rows` tasks straight into the new schema's table, one statement (no history: for scenarios
    /// that measure reading), and checkpoints.
    static func insertNewTasks(_ rows: Int, _ connection: Connection) throws {
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
    }

    /// Runs coexistd until it has mirrored everything committed so far, then stops it.
    static func catchUp(_ store: BenchStore, errorLog: String? = nil) throws {
        let daemon = try store.startDaemon(errorLog: errorLog)
        defer {
            daemon.terminate()
            daemon.wait()
        }
        let client = try LineClient(path: store.socket)
        struct Status: Decodable { var lag: Int64 }
        for _ in 0..<6_000 {
            try client.send(EventRequest("status").text)
            let reply = try client.readLine() ?? ""
            if let status = try? JSONDecoder().decode(Status.self, from: Data(reply.utf8)), status.lag == 0 { return }
            usleep(10_000)
        }
        throw BenchError("coexistd did not catch up within 60 s")
    }

    /// A fresh store the bridge has initialised (coexistd ran on it empty), its legacy side opened for the
    /// benchmark's writes, and their metadata. The caller removes the store.
    static func bridged(modelPath: String) throws -> (BenchStore, LegacyStore, SaveMetadata) {
        let store = try BenchStore(modelPath: modelPath)
        do {
            try catchUp(store)
            let legacy = try LegacyStore(path: store.path, options: OpenOptions(busyTimeoutMilliseconds: 30_000))
            return (store, legacy, SaveMetadata(author: "bench", processName: "coexist-bench"))
        } catch {
            store.remove()
            throw error
        }
    }

    /// Runs `coexistd --once` on the store: seconds taken and peak RSS (KiB); throws unless it exits 0.
    func mirrorOnce() throws -> (seconds: Double, peakKilobytes: Int) {
        let start = Measure.now()
        let daemon = try ChildProcess(
            path: ChildProcess.executableDirectory() + "/coexistd",
            arguments: [
                "--config", "/dev/null", "--database", path, "--socket", socket, "--log-level", "error", "--once",
            ]
        )
        let (status, peak) = daemon.waitWithPeakMemory()
        let seconds = Double(Measure.now() - start) / 1e9
        guard status == 0 else { throw BenchError("coexistd --once exited \(status)") }
        return (seconds, peak)
    }

    /// Starts coexistd on the store with the configuration file `config` and extra command-line `options`;
    /// returns once its socket answers (at once unless `waitForSocket`). With `errorLog`, it logs warnings too, appended to that file.
    func startDaemon(
        config: String = "/dev/null",
        options: [String] = [],
        waitForSocket: Bool = true,
        errorLog: String? = nil
    ) throws
        -> ChildProcess
    {
        let daemon = try ChildProcess(
            path: ChildProcess.executableDirectory() + "/coexistd",
            arguments: [
                "--config", config, "--database", path, "--socket", socket, "--log-level",
                errorLog == nil ? "error" : "warning",
            ] + options,
            errorLog: errorLog
        )
        guard waitForSocket else { return daemon }
        // The socket answers `status` while coexistd starts (an initial sync): wait until it serves.
        while true {
            let client = try LineClient(path: socket)
            try client.send(EventRequest("status").text)
            if let reply = try client.readLine(), ServerMessage.decode(reply)?.phase == "serving" { return daemon }
            usleep(20_000)
        }
    }

    /// Removes the directory and everything in it (what scenarios add too: a server's store, outputs).
    func remove() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// A random version-4 UUID.
    static func randomUUID() -> [UInt8] { UUIDText.randomBytes() }
}
