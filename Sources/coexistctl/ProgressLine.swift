import CoexistRuntime
import Glibc

/// A progress line on standard error for operations that take longer than a second: shown only when
/// standard error is a terminal, redrawn at most five times a second, erased when the operation ends (the
/// command's own summary line follows on standard output).
final class ProgressLine {
    private let enabled = isatty(STDERR_FILENO) == 1
    private let started = ProgressLine.now()
    private var lastDrawn: UInt64 = 0
    private var drawn = false

    /// Redraws the line with `text` when it is due.
    func update(_ text: @autoclosure () -> String) {
        guard enabled else { return }
        let now = Self.now()
        guard now - started >= 1_000_000_000, now - lastDrawn >= 200_000_000 else { return }
        lastDrawn = now
        drawn = true
        StandardStreams.prompt("\r\u{1B}[K" + text())
    }

    /// Erases the line.
    func finish() {
        if drawn { StandardStreams.prompt("\r\u{1B}[K") }
        drawn = false
    }

    private static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
