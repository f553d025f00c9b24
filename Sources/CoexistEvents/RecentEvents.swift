/// The value-less events of the most recently published transactions, as already encoded for the live
/// subscribers, so that a subscriber catching up on recent history (a consumer reconnecting after a blip,
/// a slow reader resuming after a `lagged`) is given the same bytes again instead of the history being read
/// and encoded once more for it.
///
/// Complete by construction: it holds every transaction after ``coveredAfter`` up to the last one added, in
/// token order, or it answers nothing. A transaction with an event whose identity was not yet known (see
/// ``EncodedEvent/resolved``) is held as a hole, to be read from the history again: the record never gives a
/// subscriber less than the history would. Bounded by ``maximumTransactions`` and ``maximumBytes``: the
/// oldest transactions go first.
struct RecentEvents {
    struct Entry {
        var token: Int64
        /// The events, or nil for a hole (the transaction must be read from the history).
        var events: [EncodedEvent]?
        var bytes: Int { events?.reduce(0) { $0 + $1.plain.count } ?? 0 }
    }

    /// At most this many transactions are kept.
    static let maximumTransactions = 4_096
    /// At most this many bytes of lines are kept.
    static let maximumBytes = 8 << 20

    private var entries: [Entry] = []
    /// Entries before this index are gone (removed in bulk, so that dropping the oldest costs O(1)).
    private var head = 0
    /// Bytes of the lines held.
    private(set) var bytes = 0
    /// Every transaction after this token, up to the last one added, is held; nil when nothing is.
    private(set) var coveredAfter: Int64?

    /// Transactions held.
    var count: Int { entries.count - head }

    /// Adds the events of `token`, the transaction published right after `previous` (nil: a hole, the
    /// transaction was published without being encoded). A gap (a transaction published without being
    /// added) starts the record again from `token`.
    mutating func add(token: Int64, after previous: Int64, events: [EncodedEvent]?) {
        if count == 0 || entries.last?.token != previous {
            removeAll()
            coveredAfter = previous
        }
        let plain = events?.map { event in
            var event = event
            event.withValues = nil
            return event
        }
        let entry = Entry(token: token, events: plain.flatMap { $0.allSatisfy(\.resolved) ? $0 : nil })
        entries.append(entry)
        bytes += entry.bytes
        while count > Self.maximumTransactions || (bytes > Self.maximumBytes && count > 1) {
            bytes -= entries[head].bytes
            coveredAfter = entries[head].token
            head += 1
        }
        if head > 1_024 && head * 2 > entries.count {
            entries.removeFirst(head)
            head = 0
        }
    }

    /// The transactions after `position`, in token order, when every one of them up to the last added is
    /// held; nil when some are not (the history must be read).
    func after(_ position: Int64) -> ArraySlice<Entry>? {
        guard let coveredAfter, position >= coveredAfter, count > 0 else { return nil }
        var low = head
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].token <= position { low = middle + 1 } else { high = middle }
        }
        return entries[low...]
    }

    /// Forgets everything.
    mutating func removeAll() {
        entries.removeAll()
        head = 0
        bytes = 0
        coveredAfter = nil
    }
}
