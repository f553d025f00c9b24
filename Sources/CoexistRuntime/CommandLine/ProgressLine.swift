#if canImport(Glibc)
internal import Glibc
#endif

/// A progress bar on standard error for operations that take longer than a second (`[#####     ] 45% …`):
/// shown only when standard error is a terminal, redrawn at most five times a second, erased when the
/// operation ends (the command's own summary line follows). Unchecked `Sendable`: one operation's thread
/// draws it (a callback typed `@Sendable` may hold it), never two at once.
public final class ProgressLine: @unchecked Sendable {
    private let enabled = isatty(STDERR_FILENO) == 1
    private let started = ProgressLine.now()
    private var lastDrawn: UInt64 = 0
    private var drawn = false
    private let delay: UInt64

    /// A progress line for the running command, drawn once it has run `delay` nanoseconds (default a
    /// second: quick operations draw nothing); 0 for one told of few, long phases. The environment's
    /// `COEXIST_PROGRESS_AFTER_MS` (milliseconds) overrides it: the tests draw bars of quick operations.
    public init(delay: UInt64 = 1_000_000_000) {
        if let text = getenv("COEXIST_PROGRESS_AFTER_MS").map({ String(cString: $0) }), let millis = UInt64(text),
            millis <= 3_600_000
        {
            self.delay = millis * 1_000_000
        } else {
            self.delay = delay
        }
    }

    /// Redraws the line with `text`, led by a bar when `fraction` (0…1) is known, when it is due (`force`:
    /// now, for a phase that may last long).
    public func update(_ text: @autoclosure () -> String, fraction: Double? = nil, force: Bool = false) {
        guard enabled else { return }
        let now = Self.now()
        guard now - started >= delay, force || now - lastDrawn >= 200_000_000 else { return }
        lastDrawn = now
        drawn = true
        var line = text()
        if let fraction, fraction.isFinite {
            let filled = Int((min(max(fraction, 0), 1) * 20).rounded(.down))
            let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: 20 - filled)
            line = "[\(bar)] \(Int(min(max(fraction, 0), 1) * 100))% " + line
        }
        StandardStreams.drawProgress(String(line.prefix(Self.width())))
    }

    /// Whether the line is drawn (standard error is a terminal and the operation runs long enough).
    public var isDrawing: Bool { drawn }

    /// Erases the line.
    public func finish() {
        if drawn { StandardStreams.eraseProgress() }
        drawn = false
    }

    /// The longest line drawn: one column less than the terminal's width (a line that wraps cannot be
    /// redrawn in place), 110 when the width is unknown.
    static func width() -> Int {
        var size = winsize()
        guard ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 110 }
        return max(20, Int(size.ws_col) - 1)
    }

    private static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
