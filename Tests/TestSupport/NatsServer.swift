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

/// Three `nats-server -js` processes clustered on loopback (routes between them), each with its own store
/// in a temporary folder: for streams with three replicas. Never a mock. JetStream wants every node to be
/// given its routes, so the route ports are chosen first: free ports below the kernel's range for outgoing
/// connections (which nothing else in the tests binds by number), and the cluster's name is its own.
public final class NatsCluster {
    public let nodes: [NatsServer]

    /// Starts the three nodes. Streams with three replicas can be created once JetStream has its leader
    /// (a few seconds): tests retry creating one.
    public init() throws {
        let name = "coexist-\(UInt32.random(in: 0...UInt32.max))"
        var ports: [Int] = []
        while ports.count < 3 {
            let port = Int.random(in: 20_000..<32_000)
            if !ports.contains(port), Self.isFree(port) { ports.append(port) }
        }
        nodes = try (0..<3).map { index in
            let routes = ports.enumerated().filter { $0.offset != index }.map { "nats://127.0.0.1:\($0.element)" }
            return try NatsServer(extraArguments: [
                "--server_name", "node\(index)", "--cluster_name", name,
                "--cluster", "nats://127.0.0.1:\(ports[index])", "--routes", routes.joined(separator: ","),
            ])
        }
    }

    /// Every node's URL, in order.
    public var urls: [String] { nodes.map(\.url) }

    /// Stops every node.
    public func stop() { nodes.forEach { $0.stop() } }

    /// Whether nothing listens on loopback TCP `port` now.
    static func isFree(_ port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
