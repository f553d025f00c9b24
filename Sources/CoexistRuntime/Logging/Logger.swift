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

/// Where log lines go: the journal, with structured fields, when systemd started this process
/// (`SYSTEMD_EXEC_PID` is its pid) or standard error is the journal (`JOURNAL_STREAM` names it), and the
/// journal's socket takes messages; else standard error, each line led by its time (RFC 3339, UTC,
/// microseconds) and level. A coexistd run by hand on a systemd host, or by a process that a service
/// started, writes to its standard error. When the journal's socket cannot take a message, the line goes
/// to standard error instead: with a `<N>` priority prefix and no time when standard error is itself the
/// journal (which adds both). `sd_journal_sendv` is used because the variadic `sd_journal_send` does not
/// import.
///
/// Fields are upper-case journal field names (``LogField``); on standard error they follow the message as
/// `NAME=value`, with line breaks and other control characters escaped (a peer's consumer name is logged).
public final class Logger: @unchecked Sendable {
    /// Messages below this level are dropped. Any thread may read and change it.
    public var level: LogLevel {
        get { LogLevel(rawValue: storedLevel.load(ordering: .relaxed)) ?? .info }
        set { storedLevel.store(newValue.rawValue, ordering: .relaxed) }
    }
    private let storedLevel: Atomic<Int32>
    private let identifier: String
    private let useJournal: Bool
    private let stderrIsJournal: Bool

    /// A logger for `identifier` (the `SYSLOG_IDENTIFIER`) at `level`; `forceStderr` never uses the journal.
    public init(identifier: String, level: LogLevel = .info, forceStderr: Bool = false) {
        self.identifier = identifier
        storedLevel = Atomic(level.rawValue)
        stderrIsJournal = Logger.stderrIsJournal()
        useJournal =
            !forceStderr && (Logger.startedBySystemd() || stderrIsJournal)
            && access("/run/systemd/journal/socket", W_OK) == 0
    }

    /// Logs `message` with structured `fields`; the journal also gets the calling file, line and function.
    public func log(
        _ priority: LogLevel,
        _ message: String,
        fields: [LogField: String] = [:],
        file: String = #fileID,
        line: Int = #line,
        function: String = #function
    ) {
        guard priority >= level else { return }
        let named = fields.map { ($0.key.name, $0.value) }.sorted { $0.0 < $1.0 }
        if useJournal {
            var items = ["MESSAGE=\(message)", "PRIORITY=\(priority.rawValue)", "SYSLOG_IDENTIFIER=\(identifier)"]
            items += ["CODE_FILE=\(file)", "CODE_LINE=\(line)", "CODE_FUNC=\(function)"]
            for (name, value) in named { items.append("\(name)=\(value)") }
            let buffers = items.map { Array($0.utf8) }
            var vectors = buffers.map { _ in iovec() }
            let count = Int32(vectors.count)
            let sent: Int32 = withBuffers(buffers, 0, &vectors) { vectors in sd_journal_sendv(vectors, count) }
            if sent >= 0 { return }
        }
        let suffix = named.isEmpty ? "" : " " + named.map { "\($0.0)=\(Self.escaped($0.1))" }.joined(separator: " ")
        if stderrIsJournal {
            StandardStreams.error("<\(priority.rawValue)>\(Self.escaped(message))\(suffix)")
        } else {
            StandardStreams.error("\(Logger.timestamp()) \(priority.name): \(Self.escaped(message))\(suffix)")
        }
    }

    /// Logs at error level.
    public func error(
        _ message: String,
        fields: [LogField: String] = [:],
        file: String = #fileID,
        line: Int = #line,
        function: String = #function
    ) { log(.error, message, fields: fields, file: file, line: line, function: function) }

    /// Logs at warning level.
    public func warning(
        _ message: String,
        fields: [LogField: String] = [:],
        file: String = #fileID,
        line: Int = #line,
        function: String = #function
    ) { log(.warning, message, fields: fields, file: file, line: line, function: function) }

    /// Logs at notice level.
    public func notice(
        _ message: String,
        fields: [LogField: String] = [:],
        file: String = #fileID,
        line: Int = #line,
        function: String = #function
    ) { log(.notice, message, fields: fields, file: file, line: line, function: function) }

    /// Logs at info level.
    public func info(
        _ message: String,
        fields: [LogField: String] = [:],
        file: String = #fileID,
        line: Int = #line,
        function: String = #function
    ) { log(.info, message, fields: fields, file: file, line: line, function: function) }

    /// Logs at debug level.
    public func debug(
        _ message: String,
        fields: [LogField: String] = [:],
        file: String = #fileID,
        line: Int = #line,
        function: String = #function
    ) { log(.debug, message, fields: fields, file: file, line: line, function: function) }

    /// Whether systemd started this very process: `SYSTEMD_EXEC_PID` (systemd ≥ 248) is its pid. Not
    /// `INVOCATION_ID` or `JOURNAL_STREAM` alone: every descendant of a service inherits them (a shell in a
    /// terminal's user service, a CI runner's jobs), and those want their terminal.
    static func startedBySystemd() -> Bool {
        guard let text = getenv("SYSTEMD_EXEC_PID").map({ String(cString: $0) }) else { return false }
        return Int32(text) == getpid()
    }

    /// `text` on one line: control characters (a line break in a peer's input, say) as `\u{…}` escapes.
    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if scalar.value < 0x20 || scalar.value == 0x7F {
                result += "\\u{" + String(scalar.value, radix: 16) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// The time now in RFC 3339 (UTC, microseconds): `2026-12-03T04:05:06.123456Z`.
    public static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return pad(parts.tm_year + 1900, 4) + "-" + pad(parts.tm_mon + 1, 2) + "-" + pad(parts.tm_mday, 2) + "T"
            + pad(parts.tm_hour, 2) + ":" + pad(parts.tm_min, 2) + ":" + pad(parts.tm_sec, 2) + "."
            + pad(Int32(now.tv_nsec / 1_000), 6) + "Z"
    }

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
