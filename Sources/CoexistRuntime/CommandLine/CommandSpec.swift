/// One option a command accepts: the single table its parser, its `--help` text and its manual page are
/// all made from, so that none of them can list an option the others do not.
public struct OptionSpec: Sendable {
    /// How the option is given.
    public enum Kind: Sendable, Equatable {
        /// `--name`, no value.
        case flag
        /// `--name VALUE` or `--name=VALUE`, at most once; the string names the value (`PATH`, `N`).
        case value(String)
        /// `--name VALUE`, any number of times.
        case repeatable(String)
    }

    /// The name after `--`.
    public let name: String
    /// Flag, value or repeatable value.
    public let kind: Kind
    /// What it does: one paragraph, wrapped when printed.
    public let help: String
    /// The heading it is listed under (`filters`, `prune`); nil: the command's options.
    public let group: String?

    /// A flag: `--name`.
    public static func flag(_ name: String, _ help: String, group: String? = nil) -> OptionSpec {
        OptionSpec(name: name, kind: .flag, help: help, group: group)
    }

    /// An option with a value: `--name VALUE`.
    public static func value(_ name: String, _ value: String, _ help: String, group: String? = nil) -> OptionSpec {
        OptionSpec(name: name, kind: .value(value), help: help, group: group)
    }

    /// An option that may be given more than once: `--name VALUE...`.
    public static func repeatable(
        _ name: String,
        _ value: String,
        _ help: String,
        group: String? = nil
    ) -> OptionSpec {
        OptionSpec(name: name, kind: .repeatable(value), help: help, group: group)
    }

    /// `--name VALUE` as the help text shows it.
    public var label: String {
        switch kind {
        case .flag: "--\(name)"
        case .value(let value): "--\(name) \(value)"
        case .repeatable(let value): "--\(name) \(value)..."
        }
    }

    /// This option listed under `group`.
    public func grouped(_ group: String) -> OptionSpec {
        OptionSpec(name: name, kind: kind, help: help, group: group)
    }
}

/// A command's whole interface: its synopsis lines, its description and its option table. ``usage`` (the
/// `--help` text) and ``ArgumentParser/init(_:spec:)`` are both made from it; so are the manual pages.
public struct CommandSpec: Sendable {
    /// The program and subcommand words (`coexistctl verify`).
    public let command: String
    /// The synopsis lines, each without the command (`STORE [--json]`).
    public let synopsis: [String]
    /// What the command does: paragraphs separated by blank lines (kept as written, lines included).
    public let description: String
    /// Every option, in the order the help lists them.
    public let options: [OptionSpec]

    /// Creates a command's interface.
    public init(command: String, synopsis: [String], description: String, options: [OptionSpec]) {
        self.command = command
        self.synopsis = synopsis
        self.description = description
        self.options = options
    }

    /// Every option name, for suggestions.
    public var optionNames: [String] { options.map(\.name) + ["help"] }

    /// The `--help` text: synopsis, description, then the options by group, each aligned and wrapped.
    public var usage: String {
        var lines: [String] = []
        for (index, line) in synopsis.enumerated() {
            let lead = index == 0 ? "usage: " : "       "
            lines.append(lead + command + (line.isEmpty ? "" : " " + line))
        }
        if !description.isEmpty {
            lines.append("")
            lines.append(description)
        }
        for (group, options) in groups {
            lines.append("")
            lines.append((group ?? "options") + ":")
            let column = min(options.map { $0.label.count }.max() ?? 0, 26) + 4
            for option in options {
                let help = TextWrap.lines(option.help, width: CommandSpec.width - column)
                var first = "  " + option.label
                if first.count + 2 > column {
                    lines.append(first)
                    first = ""
                }
                for (index, text) in help.enumerated() {
                    let lead = index == 0 ? first : ""
                    lines.append(lead + String(repeating: " ", count: column - lead.count) + text)
                }
                if help.isEmpty && !first.isEmpty { lines.append(first) }
            }
        }
        let column = min(options.map { $0.label.count }.max() ?? 0, 26) + 4
        lines.append("")
        lines.append("  -h, --help" + String(repeating: " ", count: max(2, column - 12)) + "print this help and exit")
        return lines.joined(separator: "\n")
    }

    /// The options by their group, groups in order of first appearance.
    public var groups: [(String?, [OptionSpec])] {
        var result: [(String?, [OptionSpec])] = []
        for option in options {
            if let index = result.firstIndex(where: { $0.0 == option.group }) {
                result[index].1.append(option)
            } else {
                result.append((option.group, [option]))
            }
        }
        return result
    }

    /// The width help text is wrapped to.
    public static let width = 110
}

/// Word wrapping and spelling suggestions for command-line text.
public enum TextWrap {
    /// `text` wrapped at word boundaries to lines of at most `width` characters (a longer word stays whole).
    public static func lines(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var current = ""
        for word in text.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
            if current.isEmpty {
                current = String(word)
            } else if current.count + 1 + word.count <= width {
                current += " " + word
            } else {
                lines.append(current)
                current = String(word)
            }
        }
        if !current.isEmpty { lines.append(current) }
        return lines
    }

    /// The candidate closest to `word` when it is a likely misspelling of it (at most two edits, or a
    /// prefix of exactly one candidate); nil otherwise.
    public static func suggestion(for word: String, among candidates: [String]) -> String? {
        let prefixed = candidates.filter { $0.hasPrefix(word) }
        if word.count >= 2, prefixed.count == 1 { return prefixed[0] }
        let scored = candidates.map { ($0, distance(word, $0)) }.filter { $0.1 <= min(2, max(1, word.count / 3)) }
        return scored.min { $0.1 < $1.1 }?.0
    }

    /// The Damerau–Levenshtein (optimal string alignment) distance: insertions, deletions, substitutions
    /// and swaps of neighbours each count one.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var best = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    best = min(best, table[i - 2][j - 2] + 1)
                }
                table[i][j] = best
            }
        }
        return table[a.count][b.count]
    }
}
