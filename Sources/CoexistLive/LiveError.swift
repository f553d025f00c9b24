/// Why following a file's commits failed or stopped.
public enum LiveError: Error, Sendable, CustomStringConvertible {
    /// The file could not be opened or read (SQLite's error).
    case file(String)
    /// coexistd's socket could not be reached, or it answered with something else than asked.
    case daemon(socket: String, detail: String)
    /// coexistd ended the subscription: it stopped, or closed a subscriber that fell behind.
    case ended(socket: String, reason: String)
    /// History a context had not merged yet was deleted (`deleteHistory`, coexistd's retention): the changes
    /// after `after` through `resumedAfter` cannot be merged; records the context holds may be stale: fetch
    /// them again. The next merge goes on after `resumedAfter`.
    case historyExpired(after: Int64, resumedAfter: Int64)
    /// coexistd had not mirrored through the token when the timeout passed (its cursor then).
    case notMirrored(token: Int64, cursor: Int64?)

    public var description: String {
        switch self {
        case .file(let detail): detail
        case .daemon(let socket, let detail): "coexistd at \(socket): \(detail)"
        case .ended(let socket, let reason): "coexistd at \(socket) ended the subscription: \(reason)"
        case .historyExpired(let after, let resumed):
            "the history after token \(after) through \(resumed) was deleted before this context merged it: fetch again"
        case .notMirrored(let token, let cursor):
            "coexistd had not mirrored through token \(token) in time"
                + (cursor.map { " (its cursor was at \($0))" } ?? "")
        }
    }
}
