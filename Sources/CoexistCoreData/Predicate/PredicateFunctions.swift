import CoexistSQLite
import Foundation

/// The SQL functions translated predicates call, registered on the store's connection: string folding
/// for `[c]`/`[d]`, `LIKE` with Core Data's wildcards, `MATCHES` with ICU regular expressions.
enum PredicateFunctions {
    static func register(on connection: Connection) throws(SQLiteError) {
        try connection.createFunction("coexist_fold", arity: 2) { arguments in
            guard case .text(let text) = arguments[0], case .integer(let flags) = arguments[1] else {
                return arguments[0]
            }
            return .text(fold(text, Int(flags)))
        }
        try connection.createFunction("coexist_like", arity: 3) { arguments in
            guard case .text(let text) = arguments[0], case .text(let pattern) = arguments[1],
                case .integer(let flags) = arguments[2]
            else { return .null }
            return .integer(like(fold(text, Int(flags)), fold(pattern, Int(flags))) ? 1 : 0)
        }
        let cache = RegexCache()
        try connection.createFunction("coexist_matches", arity: 3) { arguments in
            guard case .text(let text) = arguments[0], case .text(let pattern) = arguments[1],
                case .integer(let flags) = arguments[2], let regex = cache.regex(pattern, Int(flags))
            else { return .null }
            let subject = flags & 2 != 0 ? fold(text, 2) : text
            let range = NSRange(subject.startIndex..., in: subject)
            return .integer(regex.firstMatch(in: subject, range: range) != nil ? 1 : 0)
        }
    }

    /// `text` without case (flag 1) and diacritics (flag 2), as `[c]`, `[d]` and `[cd]` compare.
    static func fold(_ text: String, _ flags: Int) -> String {
        var options: String.CompareOptions = []
        if flags & 1 != 0 { options.insert(.caseInsensitive) }
        if flags & 2 != 0 { options.insert(.diacriticInsensitive) }
        return options.isEmpty ? text : text.folding(options: options, locale: nil)
    }

    /// Core Data's `LIKE`: `*` matches any run of characters, `?` one character, `\` escapes the next.
    static func like(_ text: String, _ pattern: String) -> Bool {
        let subject = Array(text)
        var tokens: [(Character, Bool)] = []  // (character, isWildcard)
        var escaping = false
        for character in pattern {
            if escaping {
                tokens.append((character, false))
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else {
                tokens.append((character, character == "*" || character == "?"))
            }
        }
        // Iterative matching with one backtrack point for the last `*`.
        var s = 0
        var p = 0
        var star: Int?
        var mark = 0
        while s < subject.count {
            if p < tokens.count, tokens[p].1, tokens[p].0 == "*" {
                star = p
                mark = s
                p += 1
            } else if p < tokens.count, tokens[p].1 || tokens[p].0 == subject[s] {
                s += 1
                p += 1
            } else if let star {
                p = star + 1
                mark += 1
                s = mark
            } else {
                return false
            }
        }
        while p < tokens.count, tokens[p].1, tokens[p].0 == "*" { p += 1 }
        return p == tokens.count
    }

    /// `pattern` as `MATCHES` uses it: the whole text must match (`\A(?:pattern)\z`), so that `FIA|FIAT`
    /// matches "FIAT" as NSPredicate's full-string match does, not only its first alternative.
    static func wholeText(_ pattern: String) -> String { "\\A(?:" + pattern + ")\\z" }

    /// Compiled expressions by pattern and flags; a pattern that does not compile matches nothing.
    final class RegexCache: @unchecked Sendable {
        private var compiled: [String: NSRegularExpression] = [:]
        private let lock = NSLock()

        func regex(_ pattern: String, _ flags: Int) -> NSRegularExpression? {
            lock.lock()
            defer { lock.unlock() }
            let key = "\(flags)/\(pattern)"
            if let known = compiled[key] { return known }
            let options: NSRegularExpression.Options = flags & 1 != 0 ? [.caseInsensitive] : []
            let folded = flags & 2 != 0 ? fold(pattern, 2) : pattern
            // The pattern must compile alone too: `a)|(b` would otherwise escape the wrapping.
            guard (try? NSRegularExpression(pattern: folded)) != nil,
                let regex = try? NSRegularExpression(pattern: wholeText(folded), options: options)
            else { return nil }
            if compiled.count < 256 { compiled[key] = regex }
            return regex
        }
    }
}
