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

    /// Starts coexistd on the store; returns once its socket answers.
    func startDaemon(extra: [String] = []) throws -> ChildProcess {
        let daemon = try ChildProcess(
            path: ChildProcess.executableDirectory() + "/coexistd",
            arguments: ["--database", path, "--socket", socket, "--log-level", "warning"] + extra
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
    static func randomUUID() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        let (high, low) = (generator.next() as UInt64, generator.next() as UInt64)
        var bytes = (0..<16).map { UInt8(truncatingIfNeeded: ($0 < 8 ? high : low) >> (UInt64($0 % 8) * 8)) }
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        return bytes
    }
}
