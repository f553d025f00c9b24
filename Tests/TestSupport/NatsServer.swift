public import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A real `nats-server -js` (Debian's, installed by `.ci/install-deps`) on a random loopback port with its
/// store in a temporary folder, stopped when released. Never a mock.
public final class NatsServer {
    public private(set) var process = Process()
    /// `nats://127.0.0.1:PORT`.
    public private(set) var url = ""
    private let directory: TemporaryDirectory
    private let logPath: String
    private let extraArguments: [String]

    /// Starts the server and waits (up to 20 s) until it listens.
    public init(extraArguments: [String] = []) throws {
        directory = try TemporaryDirectory()
        logPath = directory.file("nats.log")
        self.extraArguments = extraArguments
        guard FileManager.default.createFile(atPath: logPath, contents: nil) else {
            throw CocoaError(.fileWriteUnknown)
        }
        try launch(port: "-1")
    }

    /// Starts the server again after ``stop()``, on the same port with the same store.
    public func restart() throws {
        let port = String(url.split(separator: ":").last ?? "-1")
        process = Process()
        try launch(port: port)
    }

    private func launch(port: String) throws {
        guard let log = FileHandle(forWritingAtPath: logPath) else { throw CocoaError(.fileWriteUnknown) }
        try log.seekToEnd()
        let start = (try? FileManager.default.attributesOfItem(atPath: logPath)[.size] as? Int) ?? 0
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/nats-server")
        process.arguments = ["-js", "-a", "127.0.0.1", "-p", port, "-sd", directory.file("js")] + extraArguments
        process.standardError = log
        process.standardOutput = log
        try process.run()
        try log.close()
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline && process.isRunning {
            let data = FileManager.default.contents(atPath: logPath) ?? Data()
            let text = String(decoding: data.dropFirst(start), as: UTF8.self)
            if let range = text.range(of: "Listening for client connections on ") {
                let rest = text[range.upperBound...]
                let address = rest.prefix { $0 != "\n" && $0 != "\r" }
                url = "nats://" + address
                return
            }
            usleep(20_000)
        }
        throw CocoaError(.fileReadUnknown)
    }

    /// What the server logged.
    public var log: String {
        String(decoding: FileManager.default.contents(atPath: logPath) ?? Data(), as: UTF8.self)
    }

    /// Stops the server and waits: SIGKILL (a test process may run with SIGTERM blocked, and its children
    /// inherit that; the store is on disk through the page cache either way).
    public func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}
