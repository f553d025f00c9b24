import CoexistHistory
import Testing

@testable import CoexistEvents

/// The record of recently published events answers only for a range it holds whole.
@Suite struct RecentEventsTests {
    private func event(_ token: Int64, resolved: Bool = true, size: Int = 100) -> EncodedEvent {
        .sample(token, size: size, resolved: resolved)
    }

    @Test func answersOnlyFromWhereItIsComplete() {
        var recent = RecentEvents()
        #expect(recent.after(0) == nil)
        for token in Int64(11)...20 { recent.add(token: token, after: token - 1, events: [event(token)]) }
        #expect(recent.coveredAfter == 10)
        #expect(recent.after(9) == nil, "token 10 was never added")
        #expect(recent.after(10)?.map(\.token) == Array(11...20))
        #expect(recent.after(15)?.map(\.token) == Array(16...20))
        #expect(recent.after(20)?.isEmpty == true)
        #expect(recent.after(15)?.first?.events?.first?.withValues == nil, "values are never kept")
    }

    @Test func aGapStartsTheRecordAgain() {
        var recent = RecentEvents()
        for token in Int64(1)...5 { recent.add(token: token, after: token - 1, events: [event(token)]) }
        // Token 6 was published without being added (nobody wanted it).
        recent.add(token: 7, after: 6, events: [event(7)])
        #expect(recent.coveredAfter == 6)
        #expect(recent.after(3) == nil)
        #expect(recent.after(6)?.map(\.token) == [7])
        #expect(recent.count == 1)
    }

    @Test func anUnresolvedTransactionIsAHole() {
        var recent = RecentEvents()
        recent.add(token: 1, after: 0, events: [event(1)])
        recent.add(token: 2, after: 1, events: [event(2), event(2, resolved: false)])
        recent.add(token: 3, after: 2, events: [event(3)])
        let entries = recent.after(0) ?? []
        #expect(entries.map(\.token) == [1, 2, 3])
        #expect(entries.map { $0.events == nil } == [false, true, false])
        #expect(recent.bytes == 200)
    }

    @Test func theOldestGoFirstWithinBothBounds() {
        var recent = RecentEvents()
        let count = Int64(RecentEvents.maximumTransactions) + 500
        for token in 1...count { recent.add(token: token, after: token - 1, events: [event(token, size: 10)]) }
        #expect(recent.count == RecentEvents.maximumTransactions)
        #expect(recent.coveredAfter == 500)
        #expect(recent.after(500)?.first?.token == 501)
        #expect(recent.after(499) == nil)
        #expect(recent.bytes == RecentEvents.maximumTransactions * 10)

        var large = RecentEvents()
        let size = RecentEvents.maximumBytes / 4 + 1
        for token in Int64(1)...6 { large.add(token: token, after: token - 1, events: [event(token, size: size)]) }
        #expect(large.count == 3)
        #expect(large.bytes <= RecentEvents.maximumBytes)
        #expect(large.after(3)?.map(\.token) == [4, 5, 6])
    }
}
