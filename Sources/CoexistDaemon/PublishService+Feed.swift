import CoexistEvents
import CoexistRuntime

/// Publishing what the event service handed over (``EventFeed``): no history read, no second encoding.
extension PublishService {
    /// Transactions read from the history at a time (one snapshot); and the messages queued and not sent
    /// below which more is taken from the feed (a take takes every transaction that chains).
    static let page = 256
    /// A transaction whose object the bridge had not identified in both schemas when it was encoded (a
    /// new-side insert before its mirror) is published as encoded only when taken within this time (ns):
    /// a reading of the history now would most likely know no more. Taken later (the publisher was behind),
    /// it is read from the history again, which may name both identities by then.
    static let unresolvedFreshness: UInt64 = 10_000_000

    /// Publishes the transactions the feed chains from the mark, in token order, and moves the position as
    /// the history path does: each transaction's messages are sent as it is taken, while earlier ones are
    /// being acknowledged. Returns false when the history must be read now: the mark is inside a
    /// transaction, the feed holds a transaction it cannot give (one not encoded for it, or one with an
    /// object not identified yet that waited longer than ``unresolvedFreshness``), or the event service
    /// handled transactions the feed no longer chains to what was taken (what was taken before is
    /// acknowledged first). A failure to publish is noted (the next try, after the backoff, reads the
    /// history) and returns true.
    func publishFed(_ state: inout State) -> Bool {
        guard state.mark.index == nil else { return false }
        var outbox = Outbox()
        // The last transaction taken: the feed is taken after it.
        var taken = state.mark.token
        var readHistory = false
        do {
            while true {
                let (stop, pause) = shared.withLock { ($0.stop, $0.reopen || $0.held) }
                if stop {
                    // What is in flight is found in the stream at the next start.
                    state.pipeline.abandon()
                    return true
                }
                if pause {
                    try finish(&outbox, &state)
                    return true
                }
                var took = false
                // More is taken only while less than a page waits to be sent (a take takes every transaction
                // that chains): a publisher behind leaves the rest to the feed, which drops its oldest
                // transactions when full (then the history is read).
                if !readHistory, outbox.unsent < Self.page {
                    let fed = feed.take(after: taken)
                    shared.withLock { $0.last = max($0.last, fed.last) }
                    took = !fed.transactions.isEmpty
                    for transaction in fed.transactions {
                        if transaction.isMirror && !settings.mirrors {
                            outbox.add(transaction.token, [])
                            taken = transaction.token
                            continue
                        }
                        // Not encoded for the feed, or encoded too long ago to stand for the history: what comes
                        // before it is published, the rest read again.
                        guard let events = transaction.events,
                            transaction.resolved
                                || Monotonic.now() &- transaction.handedOverAt <= Self.unresolvedFreshness
                        else {
                            readHistory = true
                            break
                        }
                        outbox.add(transaction.token, pending(transaction.token, events, state))
                        taken = transaction.token
                    }
                    // The event service handled transactions that do not chain to what was taken.
                    if fed.last > taken { readHistory = true }
                }
                try pump(&outbox, &state)
                if outbox.isEmpty {
                    if readHistory { return false }
                    if !took { return true }
                }
            }
        } catch {
            note(failure: error, &state)
            return true
        }
    }
}
