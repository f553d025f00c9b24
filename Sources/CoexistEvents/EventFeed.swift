import CoexistRuntime

/// The transactions the event service has just read and encoded, handed to one reader on another thread
/// (the JetStream publisher), so that it publishes what the event thread already read instead of reading the
/// history again on its own connection: after another connection's commit, SQLite reads each page it needs
/// again, and a second reader of the same transaction pays for every one of them.
///
/// Complete by construction, like ``RecentEvents``: each transaction names the one the event service
/// handled just before it (``Transaction/after``), so a reader whose position is `p` may take a run of
/// transactions only when it starts with one whose `after` is `p`; whatever does not chain (the feed
/// dropped its oldest transactions, the event service skipped a range or failed) is read from the history
/// instead. Bounded by ``maximumTransactions`` and ``maximumBytes``: when the reader falls behind, the
/// oldest go first and the reader reads the history.
public final class EventFeed: Sendable {
    /// One transaction as the event service encoded it.
    public struct Transaction: Sendable {
        /// Its token.
        public var token: Int64
        /// The token of the transaction the event service handled just before it: no transaction lies
        /// between the two.
        public var after: Int64
        /// Whether the bridge wrote it (a mirror).
        public var isMirror: Bool
        /// Its events (with values when ``EventFeed/values``), or nil when it was not encoded for the feed (a
        /// mirror the feed does not take): the reader reads it from the history.
        public var events: [EncodedEvent]?
        /// When it was handed over (`CLOCK_MONOTONIC` nanoseconds).
        public var handedOverAt: UInt64 = 0

        /// Whether every event's object was identified in both schemas when it was encoded (see
        /// ``EncodedEvent/resolved``): when not, a later reading of the history may know more.
        public var resolved: Bool { events?.allSatisfy(\.resolved) ?? true }

        var bytes: Int {
            events?.reduce(0) { $0 + $1.plain.count + ($1.withValues?.count ?? 0) } ?? 0
        }
    }

    /// At most this many transactions wait for the reader.
    public static let maximumTransactions = 4_096
    /// At most this many bytes of lines wait for the reader.
    public static let maximumBytes = 16 << 20

    /// Whether the reader wants the events' values encoded.
    public let values: Bool
    /// Whether the reader takes the bridge's own transactions.
    public let mirrors: Bool

    private struct State {
        var transactions: [Transaction] = []
        var head = 0
        var bytes = 0
        /// The last token the event service handled (0 before any).
        var last: Int64 = 0
        /// The reader waits (``arm()``): the next transaction wakes it.
        var waiting = true
    }

    private let state = PthreadLocked(State())
    private let onAppend: @Sendable () -> Void

    /// A feed for a reader wanting `values` and `mirrors`; `onAppend` wakes the reader (called on the event
    /// thread, outside the lock, only when the reader waits: once after each ``arm()``).
    public init(values: Bool, mirrors: Bool, onAppend: @escaping @Sendable () -> Void) {
        self.values = values
        self.mirrors = mirrors
        self.onAppend = onAppend
    }

    /// Adds `transaction` (called by the event service, in token order).
    func append(_ transaction: Transaction) {
        var transaction = transaction
        transaction.handedOverAt = Monotonic.now()
        let wake = state.withLock { state in
            state.transactions.append(transaction)
            state.bytes += transaction.bytes
            state.last = max(state.last, transaction.token)
            while state.transactions.count - state.head > Self.maximumTransactions
                || (state.bytes > Self.maximumBytes && state.transactions.count - state.head > 1)
            {
                state.bytes -= state.transactions[state.head].bytes
                state.head += 1
            }
            if state.head > 1_024 && state.head * 2 > state.transactions.count {
                state.transactions.removeFirst(state.head)
                state.head = 0
            }
            defer { state.waiting = false }
            return state.waiting
        }
        if wake { onAppend() }
    }

    /// What a reader at `position` may take.
    public struct Taken: Sendable {
        /// The transactions right after `position`, in token order, each right after the one before it
        /// (empty when none chains to `position`).
        public var transactions: [Transaction]
        /// The last token the event service has handled: when it is past the last transaction taken (or
        /// `position` when none was), the history holds transactions the feed cannot give.
        public var last: Int64
    }

    /// Removes and returns the transactions that chain from `position`: the first one's `after` is
    /// `position`, each next one's the token before it. Transactions at or before `position` are dropped.
    public func take(after position: Int64) -> Taken {
        state.withLock { state in
            while state.head < state.transactions.count, state.transactions[state.head].token <= position {
                state.bytes -= state.transactions[state.head].bytes
                state.head += 1
            }
            var taken: [Transaction] = []
            var previous = position
            while state.head < state.transactions.count, state.transactions[state.head].after == previous {
                let transaction = state.transactions[state.head]
                taken.append(transaction)
                previous = transaction.token
                state.bytes -= transaction.bytes
                state.head += 1
            }
            if state.head == state.transactions.count {
                state.transactions.removeAll(keepingCapacity: true)
                state.head = 0
            }
            return Taken(transactions: taken, last: state.last)
        }
    }

    /// The reader is about to wait: the next ``append(_:)`` wakes it. Returns false, arming nothing, when
    /// transactions are waiting to be taken (handed over since the reader last took): it takes them first.
    public func arm() -> Bool {
        state.withLock { state in
            guard state.head == state.transactions.count else { return false }
            state.waiting = true
            return true
        }
    }
}
