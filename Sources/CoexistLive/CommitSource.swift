/// Where a context learns that other processes committed: from the file itself, or from coexistd.
public enum CommitSource: Sendable, Hashable {
    /// The file's own commits, seen as the file is written and at least every `interval` seconds
    /// (``StoreWatcher/init(path:interval:)``): works without coexistd; the other stack's commits arrive
    /// once coexistd has mirrored them.
    case file(interval: Double = 0.1)
    /// coexistd's event socket (``StoreWatcher/init(coexistdSocket:sides:)``): pushed as coexistd sees each
    /// transaction, mirrors included.
    case coexistd(socket: String)

    /// The file's commits, seen as the file is written.
    public static var file: CommitSource { .file() }

    /// A watcher of `path` from this source, for a context of `side` (`legacy` or `new`).
    package func watcher(path: String, side: String) throws(LiveError) -> StoreWatcher {
        switch self {
        case .file(let interval): try StoreWatcher(path: path, interval: interval)
        case .coexistd(let socket): try StoreWatcher(coexistdSocket: socket, sides: [side])
        }
    }
}
