public import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A real `nats-server -js` (Debian's, installed by `.ci/install-deps`) on a random loopback port with its
/// store in a temporary folder, stopped when released. Never a mock.
public final class NatsServer {
    public let process = Process()
    /// `nats://127.0.0.1:PORT`.
    public private(set) var url = ""
    private let directory: TemporaryDirectory
    private let logPath: String

    /// Starts the server and waits (up to 20 s) until it listens.
    public init(extraArguments: [String] = []) throws {
        directory = try TemporaryDirectory()
        logPath = directory.file("nats.log")
        guard FileManager.default.createFile(atPath: logPath, contents: nil),
            let log = FileHandle(forWritingAtPath: logPath)
        else { throw CocoaError(.fileWriteUnknown) }
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/nats-server")
        process.arguments = ["-js", "-a", "127.0.0.1", "-p", "-1", "-sd", directory.file("js")] + extraArguments
        process.standardError = log
        process.standardOutput = log
        try process.run()
        try log.close()
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline && process.isRunning {
            let text = String(decoding: FileManager.default.contents(atPath: logPath) ?? Data(), as: UTF8.self)
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

    /// Stops the server (SIGTERM) and waits.
    public func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        process.waitUntilExit()
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}
