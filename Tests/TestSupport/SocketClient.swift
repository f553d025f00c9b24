public import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A blocking newline-JSON client of the daemon's Unix socket, for tests.
public final class SocketClient: @unchecked Sendable {
    let descriptor: Int32
    private var buffer: [UInt8] = []

    /// Connects to `path`, retrying until `timeout` seconds have passed.
    public init(path: String, timeout: Double = 10) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                for (index, byte) in path.utf8.prefix(107).enumerated() { raw[index] = byte }
            }
            let result = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            if result == 0 {
                var time = timeval(tv_sec: 5, tv_usec: 0)
                setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
                self.descriptor = descriptor
                return
            }
            close(descriptor)
            guard Date() < deadline else { throw CocoaError(.fileReadNoSuchFile) }
            usleep(20_000)
        }
    }

    deinit { close(descriptor) }

    /// The socket descriptor, for tests that write raw bytes.
    public var rawDescriptor: Int32 { descriptor }

    /// Sends raw bytes. A peer that has gone away makes this a no-op (`MSG_NOSIGNAL`: no SIGPIPE, which
    /// would end the whole test process), and the next read then returns nil.
    public func send(_ text: String) {
        var bytes = Array(text.utf8)
        _ = bytes.withUnsafeMutableBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Reads one line (without the newline), nil at end of stream or timeout.
    public func readLine() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = Array(buffer[..<newline])
                buffer.removeSubrange(...newline)
                return String(decoding: line, as: UTF8.self)
            }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { return nil }
            buffer += chunk[0..<count]
        }
    }

    /// Sends one request object and returns the next message as a dictionary.
    public func request(_ json: String) throws -> [String: Any] {
        send(json + "\n")
        guard let line = readLine() else {
            throw NoReply(
                request: json,
                reason: "the connection closed, or no line came within the 5 s receive timeout"
            )
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw NoReply(request: json, reason: "the reply is not a JSON object: \(line.prefix(200))")
        }
        return object
    }

    /// A request that got no reply a test can read: which one, and why.
    public struct NoReply: Error, CustomStringConvertible {
        public let request: String
        public let reason: String
        public var description: String { "no reply to \(request): \(reason)" }
    }
}

/// A running coexistd for a test, stopped (SIGTERM) when released.
///
/// Its standard error goes to a file (``log``): a pipe nobody reads would fill up and block the daemon's
/// next log line.
public final class DaemonProcess {
    public let process = Process()
    public let socket: String
    /// The file standard error goes to.
    public let logPath: String
    /// The folder of the socket and the log, kept until the daemon is stopped: a fixture that releases its
    /// folder first would otherwise delete the database and the log under a running daemon.
    private let directory: TemporaryDirectory

    /// Starts coexistd on `database` with a socket in `directory` and extra options.
    /// With `wrapper` (`["unshare", "--user"]`), that program runs it.
    /// With `openFilesLimit`, it runs under that `RLIMIT_NOFILE` (soft and hard, set by bash's `ulimit`, after
    /// closing every descriptor the test process let it inherit).
    public init(
        database: String,
        directory: TemporaryDirectory,
        options: [String] = [],
        environment: [String: String] = [:],
        openFilesLimit: Int? = nil,
        wrapper: [String] = []
    ) throws {
        socket = directory.file("c.sock")
        self.directory = directory
        let program = ProductProcess.productsDirectory + "/coexistd"
        // A short fallback check unless the test sets its own.
        let poll = options.contains("--poll-interval") ? [] : ["--poll-interval", "200ms"]
        let arguments = ["--database", database, "--socket", socket] + poll + options
        if let openFilesLimit {
            // Descriptors the test process left open would count against the limit: close them first.
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments =
                [
                    "-c",
                    "for fd in $(ls /proc/$$/fd); do [ \"$fd\" -gt 2 ] && eval \"exec $fd>&-\"; done; "
                        + "ulimit -n \(openFilesLimit) && exec \"$0\" \"$@\"",
                    program,
                ] + arguments
        } else if let tool = wrapper.first {
            // A program that execs the daemon in place (unshare, setpriv): the process is coexistd's own.
            process.executableURL = URL(fileURLWithPath: tool.hasPrefix("/") ? tool : "/usr/bin/" + tool)
            process.arguments = Array(wrapper.dropFirst()) + [program] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = arguments
        }
        var env = ProcessInfo.processInfo.environment
        env["COEXISTD_CONFIG"] = ""  // no /etc/coexist/coexistd.conf of this machine
        // Logs to standard error (``log``), whatever service this test process runs under.
        for name in ["INVOCATION_ID", "JOURNAL_STREAM", "SYSTEMD_EXEC_PID"] { env[name] = nil }
        for (key, value) in environment { env[key] = value }
        process.environment = env
        logPath = directory.file("coexistd-\(UInt32.random(in: 0...UInt32.max)).log")
        guard FileManager.default.createFile(atPath: logPath, contents: nil),
            let logFile = FileHandle(forWritingAtPath: logPath)
        else { throw CocoaError(.fileWriteUnknown) }
        process.standardError = logFile
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        try logFile.close()
    }

    /// Waits until coexistd serves (its `status` says phase `serving`): its socket is bound earlier, while
    /// it starts; throws when it does not within `timeout` seconds. A daemon whose allowlist refuses this
    /// process counts as serving once it says so (nothing more can be seen).
    public func waitUntilServing(timeout: Double = 60) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let status = try? SocketClient(path: socket, timeout: 1).request(#"{"op":"status"}"#),
                status["phase"] as? String == "serving" || status["code"] as? String == "forbidden"
            {
                return
            }
            usleep(20_000)
        }
        throw CocoaError(.fileReadUnknown)
    }

    /// What the daemon wrote to standard error so far.
    public var log: String {
        String(decoding: FileManager.default.contents(atPath: logPath) ?? Data(), as: UTF8.self)
    }

    /// Sends SIGTERM and waits; returns the exit status. A sanitizer report in the log is copied to this
    /// process's standard error (once). A daemon still running after `limit` seconds is killed (SIGKILL),
    /// and said so: a stop never hangs the suite.
    @discardableResult
    public func stop(limit: Double = 60) -> Int32 {
        // Never started (its start failed): nothing to stop, and Foundation has no status to give.
        guard process.processIdentifier != 0 else { return -1 }
        if process.isRunning { process.terminate() }
        let deadline = Date().addingTimeInterval(limit)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            FileHandle.standardError.write(
                Data("== coexistd (\(logPath)) ignored SIGTERM for \(limit) s: killed\n".utf8)
            )
            kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
        if !reported {
            reported = true
            SanitizerReport.forward(log, from: "coexistd (\(logPath))")
        }
        return process.terminationStatus
    }

    /// Waits up to `seconds` for the daemon to exit by itself, then stops it; returns the exit status.
    public func stop(after seconds: Double) -> Int32 {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        return stop()
    }

    /// Whether ``stop()`` has looked for a sanitizer report.
    private var reported = false

    deinit { stop() }
}
