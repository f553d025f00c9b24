/// A manual page in roff (`man -l` renders it), made from the same ``CommandSpec`` tables as `--help`, so
/// that the two cannot disagree.
public struct ManualPage: Sendable {
    /// One section of the page: a heading and its body.
    public enum Section: Sendable {
        /// Text: paragraphs separated by blank lines; a paragraph whose lines are indented or aligned in
        /// columns is kept as written.
        case text(String, String)
        /// Commands, each with its synopsis, description and options.
        case commands(String, [CommandSpec])
        /// Options, each with its help.
        case options(String, [OptionSpec])
        /// A definition list: terms and what they mean.
        case definitions(String, [(String, String)])
    }

    /// The page's name (`coexistd`).
    public let name: String
    /// Its manual section (8).
    public let section: Int
    /// The one-line summary after the name.
    public let summary: String
    /// The product and version in the title line (`coexist 0.9.0`).
    public let source: String
    /// The manual's name in the title line (`System Administration`).
    public let manual: String
    /// The synopsis lines, each without the name.
    public let synopsis: [String]
    /// The sections after the synopsis, in order.
    public let sections: [Section]

    /// Creates a page.
    public init(
        name: String,
        section: Int,
        summary: String,
        source: String,
        manual: String,
        synopsis: [String],
        sections: [Section]
    ) {
        self.name = name
        self.section = section
        self.summary = summary
        self.source = source
        self.manual = manual
        self.synopsis = synopsis
        self.sections = sections
    }

    /// The page in roff (the man(7) macros).
    public var roff: String {
        var out = [
            ".TH \(name.uppercased()) \(section) \"\" \"\(source)\" \"\(manual)\"",
            ".SH NAME",
            "\(Self.escape(name)) \\- \(Self.escape(summary))",
            ".SH SYNOPSIS",
        ]
        for line in synopsis {
            out.append(".nf")
            out.append("\\fB\(Self.escape(name))\\fR \(Self.escape(line))")
            out.append(".fi")
        }
        for section in sections {
            switch section {
            case .text(let heading, let text):
                out.append(".SH \(heading.uppercased())")
                out.append(contentsOf: Self.paragraphs(text))
            case .commands(let heading, let commands):
                out.append(".SH \(heading.uppercased())")
                for command in commands {
                    out.append(".SS \(Self.escape(command.command))")
                    out.append(".nf")
                    for line in command.synopsis {
                        out.append("\\fB\(Self.escape(command.command))\\fR \(Self.escape(line))")
                    }
                    out.append(".fi")
                    out.append(contentsOf: Self.paragraphs(command.description))
                    for (group, options) in command.groups {
                        if let group { out.append(".PP\n\\fI\(Self.escape(group)):\\fR") }
                        out.append(contentsOf: Self.options(options))
                    }
                }
            case .options(let heading, let options):
                out.append(".SH \(heading.uppercased())")
                out.append(contentsOf: Self.options(options))
            case .definitions(let heading, let items):
                out.append(".SH \(heading.uppercased())")
                for (term, meaning) in items {
                    out.append(".TP")
                    out.append("\\fB\(Self.escape(term))\\fR")
                    out.append(Self.escape(meaning))
                }
            }
        }
        return out.joined(separator: "\n") + "\n"
    }

    /// `.TP` entries for `options`.
    static func options(_ options: [OptionSpec]) -> [String] {
        options.flatMap { option -> [String] in
            let label: String
            switch option.kind {
            case .flag: label = "\\fB\\-\\-\(Self.escape(option.name))\\fR"
            case .value(let value): label = "\\fB\\-\\-\(Self.escape(option.name))\\fR \\fI\(Self.escape(value))\\fR"
            case .repeatable(let value):
                label = "\\fB\\-\\-\(Self.escape(option.name))\\fR \\fI\(Self.escape(value))\\fR ..."
            }
            return [".TP", label, Self.escape(option.help)]
        }
    }

    /// Paragraphs of `text`: a plain one is filled; one whose lines are indented or hold a column gap (two
    /// spaces inside) is kept line for line.
    static func paragraphs(_ text: String) -> [String] {
        var out: [String] = []
        for paragraph in text.split(separator: "\n\n", omittingEmptySubsequences: true) {
            let lines = paragraph.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            let aligned = lines.contains { $0.hasPrefix(" ") || $0.trimmingLeadingSpaces.contains("  ") }
            out.append(".PP")
            if aligned {
                out.append(".nf")
                out.append(contentsOf: lines.map { Self.escape($0) })
                out.append(".fi")
            } else {
                out.append(contentsOf: lines.map { Self.escape($0) })
            }
        }
        return out
    }

    /// `text` safe in roff: backslashes doubled as `\e`, hyphens as `\-` (options stay searchable and copy as
    /// ASCII), and a line starting with `.` or `'` protected.
    static func escape(_ text: String) -> String {
        var escaped = text.replacingAll("\\", with: "\\e").replacingAll("-", with: "\\-")
        if escaped.hasPrefix(".") || escaped.hasPrefix("'") { escaped = "\\&" + escaped }
        return escaped
    }
}

extension String {
    fileprivate var trimmingLeadingSpaces: Substring { drop { $0 == " " } }

    fileprivate func replacingAll(_ target: Character, with replacement: String) -> String {
        var result = ""
        result.reserveCapacity(count)
        for character in self {
            if character == target { result += replacement } else { result.append(character) }
        }
        return result
    }
}
