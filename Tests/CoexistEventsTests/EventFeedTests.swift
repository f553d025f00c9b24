import CoexistHistory
import CoexistRuntime
import Synchronization
import Testing

@testable import CoexistEvents

/// The feed from the event service to the publisher gives only runs of transactions that chain from the
/// reader's position, wakes the reader only when it waits, and stays within its bounds.
@Suite struct EventFeedTests {
    private func transaction(_ token: Int64, after: Int64, size: Int = 100) -> EventFeed.Transaction {
        EventFeed.Transaction(
            token: token,
            after: after,
            isMirror: false,
            events: [.sample(token, size: size, values: false)]
        )
    }

    @Test func givesOnlyWhatChainsFromThePosition() {
        let feed = EventFeed(values: false, mirrors: false) {}
        for token in Int64(11)...15 { feed.append(transaction(token, after: token - 1)) }
        #expect(feed.take(after: 9).transactions.isEmpty, "token 10 was never handed over")
        // Transactions at or before the position are dropped; the rest chain from it.
        let taken = feed.take(after: 12)
        #expect(taken.transactions.map(\.token) == [13, 14, 15])
        #expect(taken.last == 15)
        #expect(feed.take(after: 15).transactions.isEmpty)
    }

    @Test func aSkippedRangeEndsTheRun() {
        let feed = EventFeed(values: false, mirrors: false) {}
        feed.append(transaction(1, after: 0))
        feed.append(transaction(2, after: 1))
        // The event service skipped from 2 to 5 (a range it could not read): 5 comes after 4, not 2.
        feed.append(transaction(5, after: 4))
        let first = feed.take(after: 0)
        #expect(first.transactions.map(\.token) == [1, 2])
        #expect(first.last == 5, "the reader learns the history holds more than it was given")
        #expect(feed.take(after: 2).transactions.isEmpty)
        // Once the reader read 3 and 4 from the history, the run goes on.
        #expect(feed.take(after: 4).transactions.map(\.token) == [5])
    }

    @Test func wakesTheReaderOnceEachTimeItWaits() {
        let wakes = Atomic(0)
        let feed = EventFeed(values: false, mirrors: false) { wakes.add(1, ordering: .relaxed) }
        feed.append(transaction(1, after: 0))
        feed.append(transaction(2, after: 1))
        #expect(wakes.load(ordering: .relaxed) == 1, "one wake-up for the waiting reader, none while it is due")
        #expect(!feed.arm(), "two transactions wait: the reader takes them instead of waiting")
        #expect(feed.take(after: 0).transactions.count == 2)
        // Taking does not arm: a reader that stopped midway (a failure, a hold) is woken again only by arming.
        feed.append(transaction(3, after: 2))
        #expect(wakes.load(ordering: .relaxed) == 1)
        #expect(!feed.arm())
        #expect(feed.take(after: 2).transactions.map(\.token) == [3])
        #expect(feed.arm())
        feed.append(transaction(4, after: 3))
        feed.append(transaction(5, after: 4))
        #expect(wakes.load(ordering: .relaxed) == 2)
    }

    @Test func anObjectNotIdentifiedYetIsMarkedAndTimed() {
        let feed = EventFeed(values: false, mirrors: false) {}
        let before = Monotonic.now()
        feed.append(transaction(1, after: 0))
        var unresolved = transaction(2, after: 1)
        unresolved.events?[0].resolved = false
        feed.append(unresolved)
        feed.append(transaction(3, after: 2))
        let taken = feed.take(after: 0).transactions
        #expect(taken.map(\.token) == [1, 2, 3])
        #expect(taken.map(\.resolved) == [true, false, true])
        #expect(taken.allSatisfy { $0.handedOverAt >= before && $0.handedOverAt <= Monotonic.now() })
    }

    @Test func theOldestGoFirstWithinBothBounds() {
        let feed = EventFeed(values: false, mirrors: false) {}
        let count = Int64(EventFeed.maximumTransactions) + 500
        for token in 1...count { feed.append(transaction(token, after: token - 1, size: 10)) }
        #expect(feed.take(after: 0).transactions.isEmpty, "the first 500 are gone: the history is read")
        #expect(feed.take(after: 500).transactions.count == EventFeed.maximumTransactions)

        let large = EventFeed(values: false, mirrors: false) {}
        let size = EventFeed.maximumBytes / 4 + 1
        for token in Int64(1)...6 { large.append(transaction(token, after: token - 1, size: size)) }
        #expect(large.take(after: 2).transactions.isEmpty)
        #expect(large.take(after: 3).transactions.map(\.token) == [4, 5, 6])
    }
}
