import CoexistRuntime
import TestSupport
import Testing

/// Every subcommand's `--help` lists exactly the options its parser accepts: each listed option is accepted,
/// an option not listed is refused (64), and a typo of a listed one is answered with it. The subcommands
/// are read from `coexistctl --help`, so a new one is covered without changing this file.
@Suite struct CommandHelpTests {
    /// An option line of a help text: `--name`, and whether a value follows it there.
    struct Listed: Equatable, CustomStringConvertible {
        var name: String
        var takesValue: Bool
        var description: String { "--" + name + (takesValue ? " x" : "") }
    }

    /// The options each subcommand accepted before its help and parser were made from one table: none may
    /// go missing (scripts use them). A subcommand not named here is still checked, without this floor.
    static let acceptedBefore: [String: Set<String>] = [
        "inspect": ["model", "slots", "calibrate", "check-history", "json"],
        "history": [
            "json", "ignore-consumers", "dry-run", "yes", "events", "values", "mirrors", "since", "until", "after",
            "before", "author", "entity", "type", "side", "limit", "model", "older-than", "days", "from", "to",
            "into", "database", "config", "output", "to-store",
        ],
        "schema": ["json", "sql", "versions", "model", "store"],
        "verify": ["json", "repair", "dry-run", "bootstrap", "model", "database", "config", "limit", "from"],
        "status": ["json", "socket", "config", "database"],
        "wait": ["timeout", "socket", "config", "database"],
        "tail": [
            "json", "mirrors", "values", "since", "side", "name", "count", "entity", "socket", "config", "database",
        ],
        "consumers": ["json", "to"],
        "parked": ["json", "all", "token", "object", "model", "database", "config"],
        "conflicts": ["json", "since", "limit"],
        "create": ["json", "no-history", "model", "version-info", "framework-version"],
        "demo": ["model", "directory", "steps"],
        "migrate": ["dry-run", "sql", "json", "model", "to", "momd", "config", "database", "mapping"],
    ]

    /// The subcommands `coexistctl --help` lists: the first word of each line under `commands:`.
    static func subcommands() throws -> [String] {
        let overview = try ProductProcess.run("coexistctl", ["--help"])
        var names: [String] = []
        var inCommands = false
        for line in overview.stdout.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "commands:" {
                inCommands = true
            } else if line.isEmpty {
                inCommands = false
            } else if inCommands, let name = line.split(separator: " ").first {
                names.append(String(name))
            }
        }
        return names
    }

    /// The options of a help text: every `--name` that begins a line of an option section (a heading that
    /// ends with `:` and the lines under it), with whether its label shows a value.
    static func options(inHelp help: String) -> [Listed] {
        var listed: [Listed] = []
        var inSection = false
        for line in help.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.isEmpty {
                inSection = false
            } else if !line.hasPrefix(" ") && line.hasSuffix(":") {
                inSection = true
            } else if inSection, line.hasPrefix("  --") {
                let text = line.dropFirst(2)
                let label = text.range(of: "  ").map { text[..<$0.lowerBound] } ?? text
                let words = label.split(separator: " ")
                listed.append(Listed(name: String(words[0].dropFirst(2)), takesValue: words.count > 1))
            }
        }
        return listed
    }

    /// Misspellings of `name` (neighbours swapped, a letter dropped) for which the parser's suggestion among
    /// `names` is `name` itself: the first one found, nil when there is none.
    static func typo(of name: String, among names: [String]) -> String? {
        let letters = Array(name)
        var candidates: [String] = []
        for index in stride(from: letters.count - 2, through: 0, by: -1) where letters[index] != letters[index + 1] {
            var swapped = letters
            swapped.swapAt(index, index + 1)
            candidates.append(String(swapped))
        }
        for index in letters.indices.reversed() where letters.count > 1 {
            var dropped = letters
            dropped.remove(at: index)
            candidates.append(String(dropped))
        }
        return candidates.first { candidate in
            !names.contains(candidate) && TextWrap.suggestion(for: candidate, among: names) == name
        }
    }

    @Test func theOverviewListsTheSubcommands() throws {
        let names = try Self.subcommands()
        #expect(names.count >= Self.acceptedBefore.count, "\(names)")
        #expect(Set(names).isSuperset(of: Self.acceptedBefore.keys), "\(names)")
    }

    @Test(arguments: try CommandHelpTests.subcommands())
    func helpListsWhatTheParserAccepts(_ command: String) throws {
        let directory = try TemporaryDirectory()
        // A stray argument after the option: whatever the option, the command stops at its arguments and
        // touches nothing (the current folder is an empty scratch one besides).
        let stray = directory.file("nonexistent.sqlite")
        let run = { (arguments: [String]) in
            try ProductProcess.run("coexistctl", [command] + arguments, directory: directory.path)
        }
        let help = try run(["--help"])
        #expect(help.status == 0, "\(command) --help: \(help.stderr)")
        let listed = Self.options(inHelp: help.stdout)
        let names = Set(listed.map(\.name))
        #expect(!listed.isEmpty, "\(command) --help lists no options:\n\(help.stdout)")
        #expect(
            names.isSuperset(of: Self.acceptedBefore[command] ?? []),
            "\(command) no longer lists \((Self.acceptedBefore[command] ?? []).subtracting(names).sorted())"
        )
        for option in listed {
            #expect(option.name.allSatisfy { $0.isLowercase || $0.isNumber || $0 == "-" }, "\(command): \(option)")
            // Listed under two verbs (history's --before), an option takes a value under both or neither.
            #expect(listed.filter { $0.name == option.name }.allSatisfy { $0.takesValue == option.takesValue })
        }

        // (a) Every listed option is accepted.
        for option in listed {
            let arguments = ["--" + option.name] + (option.takesValue ? ["x"] : []) + [stray]
            let result = try run(arguments)
            #expect(!result.stderr.contains("unknown option"), "\(command) \(option): \(result.stderr)")
            #expect(result.status < 128, "\(command) \(option) died: \(result.status)")
        }

        // (b) An option not listed is refused.
        let unknown = try run(["--definitely-not-an-option", stray])
        #expect(unknown.status == 64, "\(command): \(unknown.status) \(unknown.stderr)")
        #expect(unknown.stderr.contains("unknown option --definitely-not-an-option"), "\(command): \(unknown.stderr)")

        // (c) A typo of a listed option is answered with it.
        let candidates = Array(names) + ["help"]
        var checked = 0
        for name in names.sorted() {
            guard let typo = Self.typo(of: name, among: candidates) else { continue }
            let result = try run(["--" + typo, stray])
            #expect(result.status == 64, "\(command) --\(typo): \(result.status)")
            #expect(result.stderr.contains("did you mean --\(name)?"), "\(command) --\(typo): \(result.stderr)")
            checked += 1
        }
        #expect(checked == names.count, "\(command): only \(checked) of \(names.count) options have a typo to try")
    }

    /// A misspelt subcommand gets a suggestion and a one-line hint, not the whole overview.
    @Test func aMisspeltCommandGetsASuggestion() throws {
        let result = try ProductProcess.run("coexistctl", ["stauts"])
        #expect(result.status == 64)
        #expect(
            result.stderr.contains("coexistctl: unknown command \"stauts\" (did you mean status?)"),
            "\(result.stderr)"
        )
        #expect(result.stderr.contains("coexistctl --help"))
        #expect(!result.stderr.contains("commands:"), "\(result.stderr)")
        let far = try ProductProcess.run("coexistctl", ["frobnicate"])
        #expect(far.status == 64)
        #expect(!far.stderr.contains("did you mean"), "\(far.stderr)")
    }
}
