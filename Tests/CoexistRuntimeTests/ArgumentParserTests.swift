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

/// The option table: the parser made from it, the help text rendered from it, and the suggestions for typos.
@Suite struct CommandSpecTests {
    static let spec = CommandSpec(
        command: "coexistctl thing",
        synopsis: ["STORE [--json]", "other STORE --into SIDE"],
        description: "Does the thing.\n\nSecond paragraph, kept as written.",
        options: [
            .flag("json", "print one JSON object"),
            .value("model", "PATH", "the model"),
            .repeatable("entity", "NAME", "only this entity", group: "filters"),
            .value("into", "a-very-long-value-name|another", "where to", group: "other"),
        ]
    )

    @Test func theParserAcceptsTheTable() throws {
        let parsed = try ArgumentParser(
            ["s.sqlite", "--json", "--model=M", "--entity", "A", "--entity", "B", "--into", "x"],
            spec: Self.spec
        )
        #expect(parsed.flag("json"))
        #expect(parsed.option("model") == "M")
        #expect(parsed.values("entity") == ["A", "B"])
        #expect(parsed.option("into") == "x")
        #expect(parsed.positionals == ["s.sqlite"])
    }

    @Test func theParserRefusesWhatTheTableDoesNotHave() {
        func message(_ arguments: [String]) -> String? {
            do {
                _ = try ArgumentParser(arguments, spec: Self.spec)
                return nil
            } catch {
                return error.message
            }
        }
        #expect(message(["--jsno"]) == "unknown option --jsno (did you mean --json?)")
        #expect(message(["--mode", "M"]) == "unknown option --mode (did you mean --model?)")
        #expect(message(["--frobnicate"]) == "unknown option --frobnicate")
        #expect(message(["--model", "A", "--model", "B"]) == "--model is given twice")
        #expect(message(["--json", "--json"]) == "--json is given twice")
        #expect(message(["--json=yes"]) == "--json takes no value")
        #expect(message(["--into"]) == "--into needs a value")
        #expect(Self.spec.optionNames == ["json", "model", "entity", "into", "help"])
    }

    @Test func suggestionsAreCloseMisspellingsOrUniquePrefixes() {
        let commands = ["inspect", "history", "schema", "verify", "status", "tail", "wait"]
        #expect(TextWrap.suggestion(for: "stauts", among: commands) == "status")
        #expect(TextWrap.suggestion(for: "verfy", among: commands) == "verify")
        #expect(TextWrap.suggestion(for: "hist", among: commands) == "history")
        #expect(TextWrap.suggestion(for: "frobnicate", among: commands) == nil)
        // A prefix of two candidates is no suggestion; one letter is no prefix.
        #expect(TextWrap.suggestion(for: "ver", among: ["verify", "version"]) == nil)
        #expect(TextWrap.suggestion(for: "s", among: ["since", "side"]) == nil)
        #expect(TextWrap.suggestion(for: "jsno", among: ["json", "sql"]) == "json")
        #expect(TextWrap.suggestion(for: "x", among: []) == nil)
    }

    @Test func wrappingKeepsWordsWhole() {
        #expect(TextWrap.lines("one two three four", width: 9) == ["one two", "three", "four"])
        #expect(TextWrap.lines("a\nb", width: 10) == ["a b"])
        #expect(TextWrap.lines("unbreakable-word x", width: 5) == ["unbreakable-word", "x"])
        #expect(TextWrap.lines("", width: 5).isEmpty)
    }

    @Test func usageHasSynopsisDescriptionAndGroupedOptions() {
        let lines = Self.spec.usage.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[0] == "usage: coexistctl thing STORE [--json]")
        #expect(lines[1] == "       coexistctl thing other STORE --into SIDE")
        #expect(Self.spec.usage.contains("\n\nDoes the thing.\n\nSecond paragraph, kept as written.\n\n"))
        // Options without a group come under "options:", the others under their group, in table order.
        let headings = lines.filter { !$0.hasPrefix(" ") && $0.hasSuffix(":") }
        #expect(headings == ["options:", "filters:", "other:"])
        #expect(lines.contains("  --json        print one JSON object"))
        #expect(lines.contains("  --model PATH  the model"))
        #expect(lines.contains("  --entity NAME...  only this entity"))
        // A label too long for the column gets a line of its own.
        let into = lines.firstIndex(of: "  --into a-very-long-value-name|another")
        #expect(into.map { lines[$0 + 1] == String(repeating: " ", count: 30) + "where to" } == true)
        #expect(lines.last == "  -h, --help" + String(repeating: " ", count: 18) + "print this help and exit")
    }

    @Test func longHelpWrapsWithinTheWidth() {
        let sentence = Array(repeating: "a long help sentence", count: 20).joined(separator: " ")
        let spec = CommandSpec(
            command: "coexistctl thing",
            synopsis: [""],
            description: "",
            options: [.value("limit", "N", sentence), .flag("json", "short")]
        )
        let lines = spec.usage.split(separator: "\n").map(String.init)
        #expect(lines[0] == "usage: coexistctl thing")
        let indent = String(repeating: " ", count: 13)  // the longest label, 9, and 4
        let help = lines.filter { $0.hasPrefix("  --limit N") || $0.hasPrefix(indent) }
        #expect(help.count > 3, "\(lines)")
        #expect(lines.allSatisfy { $0.count <= CommandSpec.width }, "\(lines)")
        // Continuation lines line up under the first line's help.
        #expect(help.dropFirst().allSatisfy { !$0.hasPrefix(indent + " ") })
        #expect(help[0].hasPrefix("  --limit N  a long help"))
        #expect(help.map { $0.split(separator: " ").count }.reduce(0, +) == 2 + 80)
    }
}
