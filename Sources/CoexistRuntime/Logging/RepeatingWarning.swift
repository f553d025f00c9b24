/// A warning that may repeat many times a second (a failing checkpoint, a failing publish): the first
/// occurrence is logged at once, later ones at most once per interval with how many were held back, and a
/// recovery is logged once. A failure loop therefore costs a few log lines, never a log storm.
public struct RepeatingWarning: Sendable {
    /// The shortest time between two log lines, in nanoseconds.
    public let interval: UInt64
    private var lastLogged: UInt64?
    private var heldBack = 0
    private var occurrences = 0

    /// A warning logged at most once per `interval` nanoseconds (default 10 s).
    public init(interval: UInt64 = 10_000_000_000) { self.interval = interval }

    /// Whether the warning is failing now (occurred since the last ``recovered(_:logger:)``).
    public var isActive: Bool { occurrences > 0 }

    /// Records one occurrence at `now` (monotonic nanoseconds); logs it unless one was logged within the
    /// interval.
    public mutating func occurred(_ message: String, logger: Logger, now: UInt64, fields: [LogField: String] = [:]) {
        occurrences += 1
        if let lastLogged, now < lastLogged &+ interval {
            heldBack += 1
            return
        }
        let suffix = heldBack > 0 ? " (\(heldBack) more times since the last report)" : ""
        logger.warning(message + suffix, fields: fields)
        lastLogged = now
        heldBack = 0
    }

    /// Records that the failing operation succeeded again; logs `message` once when it had failed.
    public mutating func recovered(_ message: String, logger: Logger) {
        guard occurrences > 0 else { return }
        logger.notice("\(message) (after \(occurrences) failures)")
        occurrences = 0
        heldBack = 0
        lastLogged = nil
    }
}

/// A ``RepeatingWarning`` with its logger and the monotonic clock, for one thread's use: `warn` logs the
/// first line at once and then at most one line per interval, saying how many were held back.
public final class RateLimitedWarnings: @unchecked Sendable {
    private var warning: RepeatingWarning
    private let logger: Logger

    /// Warnings to `logger`, at most one line per `interval` nanoseconds (default 10 s).
    public init(logger: Logger, interval: UInt64 = 10_000_000_000) {
        self.logger = logger
        warning = RepeatingWarning(interval: interval)
    }

    /// Logs `message`, or counts it when a line was logged within the interval.
    public func warn(_ message: String, fields: [LogField: String] = [:]) {
        warning.occurred(message, logger: logger, now: Monotonic.now(), fields: fields)
    }
}
