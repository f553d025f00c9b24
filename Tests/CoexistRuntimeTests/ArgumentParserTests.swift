import CoexistRuntime
import Testing

@Suite struct ArgumentParserTests {
    @Test func parsesFlagsOptionsAndPositionals() throws {
        let parsed = try ArgumentParser(
            ["a.sqlite", "--json", "--model", "M", "--since=5", "--", "--literal"],
            flags: ["json"],
            options: ["model", "since"]
        )
        #expect(parsed.flag("json"))
        #expect(parsed.option("model") == "M")
        #expect(parsed.option("since") == "5")
        #expect(parsed.positionals == ["a.sqlite", "--literal"])
    }

    @Test func rejectsUnknownOptionsAndMissingValues() {
        #expect(throws: ArgumentParser.UsageError.self) { try ArgumentParser(["--nope"], flags: [], options: []) }
        #expect(throws: ArgumentParser.UsageError.self) {
            try ArgumentParser(["--model"], flags: [], options: ["model"])
        }
        #expect(throws: ArgumentParser.UsageError.self) {
            try ArgumentParser(["--json=1"], flags: ["json"], options: [])
        }
    }

    @Test func positionalCountsAreChecked() throws {
        let parsed = try ArgumentParser(["a", "b"], flags: [], options: [])
        #expect(throws: ArgumentParser.UsageError.self) { try parsed.positionals(min: 1, max: 1) }
        #expect(try parsed.positionals(min: 2, max: 2) == ["a", "b"])
    }
}
