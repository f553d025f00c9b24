import Testing

@testable import CoexistSaving

/// Giving an ordered to-many its new order, the same for both formats.
@Suite struct OrderedUpkeepTests {
    @Test func removesAddsThenNumbersEveryTargetWhenTheOrderChanged() throws {
        var calls: [String] = []
        try OrderedUpkeep.set(
            ["c", "a", "d"],
            current: ["a", "b", "c"],
            remove: { calls.append("remove \($0)") },
            add: { calls.append("add \($0)") },
            position: { calls.append("\($0)=\($1)") },
            touch: { calls.append("touch") }
        )
        #expect(calls == [#"remove ["b"]"#, #"add ["d"]"#, "c=1024", "a=2048", "d=3072", "touch"])
    }

    @Test func theSameOrderWritesNoPosition() throws {
        var calls: [String] = []
        try OrderedUpkeep.set(
            ["a", "b"],
            current: ["a", "b"],
            remove: { calls.append("remove \($0)") },
            add: { calls.append("add \($0)") },
            position: { calls.append("\($0)=\($1)") },
            touch: { calls.append("touch") }
        )
        #expect(calls == ["remove []", "add []"])
    }
}
