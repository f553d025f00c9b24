#if canImport(Glibc)
internal import Glibc
#endif

/// Writing to standard output and standard error without Foundation, retrying short writes and EINTR.
public enum StandardStreams {
    /// Writes `text` and a newline to standard output.
    public static func out(_ text: String) { out(text, newline: true) }

    /// Writes `text` to standard output, with a newline unless `newline` is false.
    public static func out(_ text: String, newline: Bool) {
        ProgressState.shown.withLock { shown in
            erase(&shown)
            write(newline ? text + "\n" : text, to: STDOUT_FILENO)
        }
    }

    /// Writes `text` and a newline to standard error.
    public static func error(_ text: String) {
        ProgressState.shown.withLock { shown in
            erase(&shown)
            write(text + "\n", to: STDERR_FILENO)
        }
    }

    /// Writes `text` to standard error without a newline (a question before reading the answer).
    public static func prompt(_ text: String) { write(text, to: STDERR_FILENO) }

    /// Draws a ``ProgressLine``'s text in place of the one drawn before (a line of its own, no newline): a
    /// later ``out(_:)`` or ``error(_:)`` erases it first, so no message ever starts at the end of the bar.
    static func drawProgress(_ line: String) {
        ProgressState.shown.withLock { shown in
            shown = true
            write("\r\u{1B}[K" + line, to: STDERR_FILENO)
        }
    }

    /// Erases the ``ProgressLine`` drawn, if one is.
    static func eraseProgress() { ProgressState.shown.withLock { erase(&$0) } }

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
private enum ProgressState {
    static let shown = PthreadLocked(false)
}
