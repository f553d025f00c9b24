internal import CSystemd
import Synchronization

#if canImport(Glibc)
internal import Glibc
#endif

/// Syslog priorities, as the journal and `<N>` prefixes use them.
public enum LogLevel: Int32, Sendable, Comparable, CaseIterable {
    case error = 3
    case warning = 4
    case notice = 5
    case info = 6
    case debug = 7

    /// The configuration spelling (`info`).
    public var name: String {
        switch self {
        case .error: "error"
        case .warning: "warning"
        case .notice: "notice"
        case .info: "info"
        case .debug: "debug"
        }
    }

    /// The level named `name`.
    public init?(name: String) {
        guard let level = LogLevel.allCases.first(where: { $0.name == name }) else { return nil }
        self = level
    }

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue > rhs.rawValue }
}

/// Where log lines go: the journal with structured fields when it is there, else standard error with
/// `<N>` priority prefixes (which systemd reads when stderr is a journal stream).
///
/// The journal is used when its socket exists (`/run/systemd/journal/socket`) or `JOURNAL_STREAM` names
/// standard error; `sd_journal_sendv` is used because the variadic `sd_journal_send` does not import.
public final class Logger: @unchecked Sendable {
    /// Messages below this level are dropped. Any thread may read and change it.
    public var level: LogLevel {
        get { LogLevel(rawValue: storedLevel.load(ordering: .relaxed)) ?? .info }
        set { storedLevel.store(newValue.rawValue, ordering: .relaxed) }
    }
    private let storedLevel: Atomic<Int32>
    private let identifier: String
    private let useJournal: Bool

    /// A logger for `identifier` (the `SYSLOG_IDENTIFIER`) at `level`.
    public init(identifier: String, level: LogLevel = .info, forceStderr: Bool = false) {
        self.identifier = identifier
        storedLevel = Atomic(level.rawValue)
        useJournal = !forceStderr && (access("/run/systemd/journal/socket", W_OK) == 0 || Logger.stderrIsJournal())
    }

    /// Logs `message` with extra journal `fields` (upper-case names, such as `COEXIST_TOKEN`).
    public func log(_ priority: LogLevel, _ message: String, fields: [String: String] = [:]) {
        guard priority >= level else { return }
        if useJournal {
            var items = ["MESSAGE=\(message)", "PRIORITY=\(priority.rawValue)", "SYSLOG_IDENTIFIER=\(identifier)"]
            for (name, value) in fields.sorted(by: { $0.key < $1.key }) { items.append("\(name)=\(value)") }
            let buffers = items.map { Array($0.utf8) }
            var vectors = buffers.map { _ in iovec() }
            let count = Int32(vectors.count)
            let sent: Int32 = withBuffers(buffers, 0, &vectors) { vectors in sd_journal_sendv(vectors, count) }
            if sent >= 0 { return }
        }
        let suffix =
            fields.isEmpty
            ? "" : " " + fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        StandardStreams.error("<\(priority.rawValue)>\(message)\(suffix)")
    }

    public func error(_ message: String, fields: [String: String] = [:]) { log(.error, message, fields: fields) }
    public func warning(_ message: String, fields: [String: String] = [:]) { log(.warning, message, fields: fields) }
    public func notice(_ message: String, fields: [String: String] = [:]) { log(.notice, message, fields: fields) }
    public func info(_ message: String, fields: [String: String] = [:]) { log(.info, message, fields: fields) }
    public func debug(_ message: String, fields: [String: String] = [:]) { log(.debug, message, fields: fields) }

    /// Whether `JOURNAL_STREAM` (device:inode) names the file standard error is.
    static func stderrIsJournal() -> Bool {
        guard let stream = getenv("JOURNAL_STREAM").map({ String(cString: $0) }) else { return false }
        var info = stat()
        guard fstat(STDERR_FILENO, &info) == 0 else { return false }
        return stream == "\(info.st_dev):\(info.st_ino)"
    }
}

/// Points `vectors[index...]` at `buffers[index...]` for the duration of `body`.
private func withBuffers<R>(
    _ buffers: [[UInt8]],
    _ index: Int,
    _ vectors: inout [iovec],
    _ body: (UnsafePointer<iovec>) -> R
) -> R {
    if index == buffers.count { return vectors.withUnsafeBufferPointer { body($0.baseAddress!) } }
    return buffers[index].withUnsafeBytes { raw in
        vectors[index] = iovec(iov_base: UnsafeMutableRawPointer(mutating: raw.baseAddress), iov_len: raw.count)
        return withBuffers(buffers, index + 1, &vectors, body)
    }
}
