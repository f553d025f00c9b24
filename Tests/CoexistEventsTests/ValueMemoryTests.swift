import CoexistHistory
import CoexistModel
import Testing

@testable import CoexistEvents

@Suite struct ValueMemoryTests {
    private static func task(_ pk: Int64) -> EventSource.ChangedObject {
        EventSource.ChangedObject(side: .legacy, entity: "Task", pk: pk)
    }

    @Test func updatesMergeAndBeforeNamesOnlyWhatIsAsked() {
        var memory = ValueMemory()
        memory.remember(
            Self.task(1),
            ["title": .attribute(.string("a")), "priority": .attribute(.integer(1))],
            uncertain: [],
            token: 1
        )
        memory.remember(Self.task(1), ["priority": .attribute(.integer(2))], uncertain: [], token: 2)
        let before = memory.before(Self.task(1), ["priority", "done"])
        #expect(before.count == 1)
        guard case .attribute(.integer(2))? = before["priority"] else {
            Issue.record("\(before)")
            return
        }
        #expect(memory.values(of: Self.task(1)).count == 2)
        #expect(memory.before(Self.task(2), ["priority"]).isEmpty, "another object")
        memory.forget(Self.task(1))
        #expect(memory.count == 0 && memory.bytes == 0)
    }

    @Test func valuesNotKnownExactlyAreForgottenNotKept() {
        var memory = ValueMemory()
        memory.remember(
            Self.task(1),
            ["category": .attribute(.string("c1")), "tags": .list(["t1"])],
            uncertain: [],
            token: 1
        )
        // The to-one's target has no identity yet, a member neither: what was remembered is stale.
        memory.remember(
            Self.task(1),
            ["category": .attribute(.null), "tags": .list(["t1", nil])],
            uncertain: ["category"],
            token: 2
        )
        #expect(memory.values(of: Self.task(1)).isEmpty)
        #expect(memory.count == 1)
    }

    @Test func theOldestObjectsGoFirstWithinBothBounds() {
        var memory = ValueMemory(maxObjects: 100, maxBytes: 1 << 20)
        for pk in 1...1_000 {
            memory.remember(
                Self.task(Int64(pk)),
                ["n": .attribute(.integer(Int64(pk)))],
                uncertain: [],
                token: Int64(pk)
            )
            // Object 1 is remembered again each time: it stays the newest.
            memory.remember(Self.task(1), ["n": .attribute(.integer(0))], uncertain: [], token: Int64(pk))
        }
        #expect(memory.count == 100)
        #expect(!memory.values(of: Self.task(1)).isEmpty)
        #expect(!memory.values(of: Self.task(1_000)).isEmpty)
        #expect(memory.values(of: Self.task(900)).isEmpty)

        var small = ValueMemory(maxObjects: 1_000, maxBytes: 64 << 10)
        let text = String(repeating: "x", count: 1_000)
        for pk in 1...1_000 {
            small.remember(Self.task(Int64(pk)), ["t": .attribute(.string(text))], uncertain: [], token: Int64(pk))
        }
        #expect(small.bytes <= 64 << 10 && small.count > 10 && small.count < 70)
        // A value larger than an eighth of the budget is not kept at all.
        small.remember(
            Self.task(1),
            ["t": .attribute(.string(String(repeating: "y", count: 9 << 10)))],
            uncertain: [],
            token: 2_000
        )
        #expect(small.values(of: Self.task(1)).isEmpty)
    }
}
