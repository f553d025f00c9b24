#if canImport(Glibc)
internal import Glibc
#endif

/// Writing to standard output and standard error without Foundation, retrying short writes and EINTR.
public enum StandardStreams {
    /// Writes `text` and a newline to standard output.
    public static func out(_ text: String) { out(text, newline: true) }

    /// Writes `text` to standard output, with a newline unless `newline` is false.
    public static func out(_ text: String, newline: Bool) {
        ProgressState.shared.shown.withLock { shown in
            erase(&shown)
            write(newline ? text + "\n" : text, to: STDOUT_FILENO)
        }
    }

    /// Writes `text` and a newline to standard error.
    public static func error(_ text: String) {
        ProgressState.shared.shown.withLock { shown in
            erase(&shown)
            write(text + "\n", to: STDERR_FILENO)
        }
    }

    /// Writes `text` to standard error without a newline (a question before reading the answer).
    public static func prompt(_ text: String) { write(text, to: STDERR_FILENO) }

    /// Draws a ``ProgressLine``'s text in place of the one drawn before (a line of its own, no newline): a
    /// later ``out(_:)`` or ``error(_:)`` erases it first, so no message ever starts at the end of the bar.
    static func drawProgress(_ line: String) {
        ProgressState.shared.shown.withLock { shown in
            shown = true
            write("\r\u{1B}[K" + line, to: STDERR_FILENO)
        }
    }

    /// Erases the ``ProgressLine`` drawn, if one is.
    static func eraseProgress() { ProgressState.shared.shown.withLock { erase(&$0) } }

    /// Erases the line when `shown` (the caller holds the lock).
    private static func erase(_ shown: inout Bool) {
        guard shown else { return }
        shown = false
        write("\r\u{1B}[K", to: STDERR_FILENO)
    }

    private static func write(_ text: String, to descriptor: Int32) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { buffer in
                Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return }
            offset += written
        }
        bytes.removeAll()
    }
}

/// Whether a progress line is on the terminal, under the lock that also orders the writes: a line drawn
/// and a message from another thread never interleave. A pthread mutex, which ThreadSanitizer follows
/// (log lines come from every thread of coexistd).
private final class ProgressState: @unchecked Sendable {
    static let shared = ProgressState()
    let shown = ProgressState.Locked()

    /// A flag and the mutex guarding it.
    final class Locked: @unchecked Sendable {
        private let mutex: UnsafeMutablePointer<pthread_mutex_t>
        private var value = false

        init() {
            mutex = .allocate(capacity: 1)
            pthread_mutex_init(mutex, nil)
        }

        /// Runs `body` with the flag, under the mutex.
        func withLock<Result>(_ body: (inout Bool) -> Result) -> Result {
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return body(&value)
        }
    }
}
