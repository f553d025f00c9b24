import CoexistEvents
import CoexistRuntime

/// Publishing what the event service handed over (``EventFeed``): no history read, no second encoding.
extension PublishService {
    /// Transactions published per window of messages in flight, at most, from the feed and from the
    /// history alike.
    static let page = 256
    /// A transaction whose object the bridge had not identified in both schemas when it was encoded (a
    /// new-side insert before its mirror) is published as encoded only when taken within this time (ns):
    /// a reading of the history now would most likely know no more. Taken later (the publisher was behind),
    /// it is read from the history again, which may name both identities by then.
    static let unresolvedFreshness: UInt64 = 10_000_000

    /// Publishes the transactions the feed chains from the mark, in token order, and moves the position as
    /// the history path does. Returns false when the history must be read now: the mark is inside a
    /// transaction, the feed holds a transaction it cannot give (one not encoded for it, or one with an
    /// object not identified yet that waited longer than ``unresolvedFreshness``), or the event service
    /// handled transactions the feed no longer chains to the mark. A failure to publish is noted
    /// (the next try, after the backoff, reads the history) and returns true.
    func publishFed(_ state: inout State) -> Bool {
        guard state.mark.index == nil else { return false }
        do {
            while true {
                if shared.withLock({ $0.stop || $0.reopen || $0.held }) { return true }
                let taken = feed.take(after: state.mark.token)
                shared.withLock { $0.last = max($0.last, taken.last) }
                guard !taken.transactions.isEmpty else { return taken.last <= state.mark.token }
                var start = 0
                while start < taken.transactions.count {
                    let chunk = taken.transactions[start..<min(start + Self.page, taken.transactions.count)]
                    var pending: [Pending] = []
                    var through: Int64?
                    for transaction in chunk {
                        if transaction.isMirror && !settings.mirrors {
                            through = transaction.token
                            continue
                        }
                        // Not encoded for the feed, or encoded too long ago to stand for the history: what comes
                        // before it is published, the rest read again.
                        guard let events = transaction.events,
                            transaction.resolved
                                || Monotonic.now() &- transaction.handedOverAt <= Self.unresolvedFreshness
                        else { break }
                        pending += self.pending(transaction.token, events, state)
                        through = transaction.token
                    }
                    let published = try send(pending, &state)
                    guard let through else { return false }
                    state.mark = Mark(token: through, index: nil)
                    shared.withLock {
                        $0.published += published
                        $0.position = through
                    }
                    post(through, &state)
                    guard through == chunk.last?.token else { return false }
                    start += chunk.count
                }
            }
        } catch {
            note(failure: error, &state)
            return true
        }
    }
}
