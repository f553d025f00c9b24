import CoexistLegacyStore
import CoexistModel
import CoexistRuntime
import CoexistStore

#if canImport(Glibc)
import Glibc
#endif

/// A fresh demo-model store in a temporary directory, and a coexistd running on it.
struct BenchStore {
    let directory: String
    let path: String
    let socket: String
    let model: Model

    /// Creates the store with both schemas.
    init(modelPath: String) throws {
        model = try XCDataModelReader.read(path: modelPath)
        var template = Array("/tmp/coexist-bench.XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw SystemError(call: "mkdtemp", code: errno)
        }
        directory = String(cString: made)
        path = directory + "/Bench.sqlite"
        socket = directory + "/coexist.sock"
        _ = try StoreCreator.create(path: path, model: model)
        try NewStore(path: path, model: model).createSchema()
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

    /// Starts coexistd on the store; returns once its socket answers.
    private func startDaemon() throws -> ChildProcess {
        let daemon = try ChildProcess(
            path: ChildProcess.executableDirectory() + "/coexistd",
            arguments: ["--database", path, "--socket", socket, "--log-level", "warning"]
        )
        let client = try LineClient(path: socket)
        try client.send(#"{"op":"ping"}"#)
        _ = try client.readLine()
        return daemon
    }

    /// Removes the directory and everything in it.
    func remove() {
        for name in ["Bench.sqlite", "Bench.sqlite-wal", "Bench.sqlite-shm", "coexist.sock"] {
            unlink(directory + "/" + name)
        }
        rmdir(directory)
    }

    /// A random version-4 UUID.
    static func randomUUID() -> [UInt8] { UUIDText.randomBytes() }
}
