#if canImport(Glibc)
internal import Glibc
#endif

/// A child process started with `posix_spawn`, for tools that run the daemon (the demo).
public final class ChildProcess {
    /// The child's pid.
    public let pid: Int32
    private var status: Int32?

    /// Starts `path` with `arguments` (without the program name), inheriting the environment and descriptors
    /// (standard output goes to /dev/null when `quiet`; standard error is appended to `errorLog` when given).
    public init(path: String, arguments: [String], quiet: Bool = false, errorLog: String? = nil) throws(SystemError) {
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if quiet { posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0) }
        if let errorLog {
            posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, errorLog, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        }
        var pid: pid_t = 0
        let code = posix_spawn(&pid, path, &actions, nil, argv, environ)
        guard code == 0 else { throw SystemError(call: "posix_spawn", code: code, subject: path) }
        self.pid = pid
    }

    /// Sends SIGTERM: a graceful stop.
    public func terminate() { kill(pid, SIGTERM) }

    /// Sends SIGKILL: no chance to clean up (for crash tests).
    public func killNow() { kill(pid, SIGKILL) }

    /// Waits for the child to end; returns its exit status (128 + signal when killed).
    @discardableResult
    public func wait() -> Int32 {
        if let status { return status }
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
        let result = (raw & 0x7F) == 0 ? (raw >> 8) & 0xFF : 128 + (raw & 0x7F)
        status = result
        return result
    }

    /// Whether the child has ended (collecting its status without waiting).
    public var hasExited: Bool {
        if status != nil { return true }
        var raw: Int32 = 0
        guard waitpid(pid, &raw, WNOHANG) == pid else { return false }
        status = (raw & 0x7F) == 0 ? (raw >> 8) & 0xFF : 128 + (raw & 0x7F)
        return true
    }

    /// Waits for the child to end; returns its exit status and its peak resident set size in KiB.
    ///
    /// The peak is the kernel's high-water mark of the child's own memory (`VmHWM`), read every 10 ms until
    /// it exits. Not `wait4`'s `ru_maxrss`: a child started by `posix_spawn` shares its parent's memory until
    /// it execs, and Linux folds that (the parent's peak) into the child's `ru_maxrss`.
    public func waitWithPeakMemory() -> (status: Int32, peakKilobytes: Int) {
        var peak = 0
        var raw: Int32 = 0
        while true {
            peak = max(peak, Self.highWaterMark(pid))
            let done = waitpid(pid, &raw, WNOHANG)
            if done == pid { break }
            if done < 0 && errno != EINTR { break }
            usleep(10_000)
        }
        let result = (raw & 0x7F) == 0 ? (raw >> 8) & 0xFF : 128 + (raw & 0x7F)
        status = result
        return (result, peak)
    }

    /// `VmHWM` of `/proc/PID/status` in KiB; 0 when it cannot be read.
    static func highWaterMark(_ pid: Int32) -> Int {
        guard let file = fopen("/proc/\(pid)/status", "r") else { return 0 }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 256)
        while fgets(&line, Int32(line.count), file) != nil {
            let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if text.hasPrefix("VmHWM:") {
                return Int(text.dropFirst(6).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "") ?? 0
            }
        }
        return 0
    }

    /// The path of the running executable's directory (to find sibling programs).
    public static func executableDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return "." }
        let path = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
    }
}

/// A blocking client of the daemon's socket for tools: one request line, one reply line.
public final class LineClient {
    private let descriptor: Int32
    private let path: String
    private var buffer: [UInt8] = []

    /// Connects to the socket at `path`, retrying for up to `timeout` seconds (the daemon may be starting).
    public init(path: String, timeout: Double = 10) throws(SystemError) {
        self.path = path
        var waited = 0.0
        while true {
            do {
                descriptor = try Self.connect(path: path)
                return
            } catch {
                guard waited < timeout, error.call == "connect" else { throw error }
            }
            usleep(20_000)
            waited += 0.02
        }
    }

    /// The error of a failed `send` or `read` on the socket at `path`.
    private static func lost(_ call: String, _ code: Int32, _ path: String) -> SystemError {
        let closed = code == EPIPE || code == ECONNRESET
        return SystemError(
            call: call,
            code: code,
            subject: path,
            detail: closed ? "coexistd closed the connection (\(String(cString: strerror(code))))" : nil
        )
    }

    /// A connected (blocking, close-on-exec) Unix stream socket to `path`, after one attempt.
    public static func connect(path: String) throws(SystemError) -> Int32 {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw SystemError(call: "socket", code: errno, subject: path) }
        var address = UnixListener.address(path)
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            close(descriptor)
            throw SystemError(call: "connect", code: code, subject: path)
        }
        return descriptor
    }

    deinit { close(descriptor) }

    /// Sends `line` (a newline is added). A daemon that has closed the connection is an error
    /// (`MSG_NOSIGNAL`: never a SIGPIPE that would end the process).
    public func send(_ line: String) throws(SystemError) {
        var bytes = Array((line + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes {
                Glibc.send(descriptor, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw Self.lost("send", errno, path) }
            offset += written
        }
    }

    /// Makes reads give up after `seconds` without data: ``readLine()`` then throws `EAGAIN`.
    public func setReadTimeout(seconds: Double) throws(SystemError) {
        var limit = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - Double(Int(seconds))) * 1e6))
        guard setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size)) == 0
        else { throw SystemError(call: "setsockopt", code: errno) }
    }

    /// The next line, nil at end of stream.
    public func readLine() throws(SystemError) -> String? {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw Self.lost("read", errno, path) }
            if count == 0 { return nil }
            buffer += chunk[0..<count]
        }
    }
}
