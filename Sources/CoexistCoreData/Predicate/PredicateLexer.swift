/// Splits a predicate format string into tokens.
struct PredicateLexer {
    enum Token: Sendable, Hashable {
        case identifier(String)
        /// A reserved word, upper-cased (`AND`, `BEGINSWITH`, `NIL`, …).
        case keyword(String)
        /// `@count` and the other collection operators, without the `@`.
        case aggregate(String)
        case string(String)
        case integer(Int64)
        case real(Double)
        /// `%@`, `%K`, `%d`, …: the letter(s) after `%`.
        case specifier(String)
        /// Punctuation and operators: `(`, `)`, `{`, `}`, `,`, `.`, `[`, `]`, `==`, `!=`, `<`, `&&`, `!`, …
        case symbol(String)
        case end
    }

    static let keywords: Set<String> = [
        "AND", "OR", "NOT", "IN", "BETWEEN", "BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE", "MATCHES", "ANY",
        "ALL", "NONE", "SOME", "TRUEPREDICATE", "FALSEPREDICATE", "TRUE", "FALSE", "YES", "NO", "NIL", "NULL",
        "SELF", "SUBQUERY", "FUNCTION",
    ]

    let characters: [Character]
    let format: String
    var position = 0

    init(_ format: String) {
        self.format = format
        characters = Array(format)
    }

    func failure(_ reason: String, at position: Int) -> CoreDataError {
        .predicate(format: format, position: position, reason: reason)
    }

    /// The next token and the position it starts at.
    mutating func next() throws(CoreDataError) -> (Token, Int) {
        while position < characters.count, characters[position].isWhitespace { position += 1 }
        let start = position
        guard position < characters.count else { return (.end, start) }
        let character = characters[position]
        if character.isLetter || character == "_" || character == "#" {
            return (word(), start)
        }
        if character.isNumber || (character == "-" && peekIsDigit(position + 1)) {
            return (try number(), start)
        }
        switch character {
        case "\"", "'": return (try quoted(character), start)
        case "%": return (try specifier(), start)
        case "@":
            position += 1
            guard position < characters.count, characters[position].isLetter,
                case .identifier(let name) = word()
            else { throw failure("expected an operator such as @count after @", at: start) }
            return (.aggregate(name.lowercased()), start)
        case "$": throw failure("substitution variables are not supported", at: start)
        default: return (try symbol(), start)
        }
    }

    private func peekIsDigit(_ index: Int) -> Bool { index < characters.count && characters[index].isNumber }

    /// A word at `position` (which is in bounds): an identifier, a reserved word, or `#word` (escaped).
    private mutating func word() -> Token {
        var escaped = false
        if characters[position] == "#" {
            escaped = true
            position += 1
        }
        let start = position
        while position < characters.count,
            characters[position].isLetter || characters[position].isNumber
                || characters[position] == "_"
        {
            position += 1
        }
        let text = String(characters[start..<position])
        if !escaped, Self.keywords.contains(text.uppercased()) { return .keyword(text.uppercased()) }
        return .identifier(text)
    }

    private mutating func number() throws(CoreDataError) -> Token {
        let start = position
        if characters[position] == "-" { position += 1 }
        if position + 1 < characters.count, characters[position] == "0", characters[position + 1].lowercased() == "x" {
            position += 2
            let digits = position
            while position < characters.count, characters[position].isHexDigit { position += 1 }
            guard let value = Int64(String(characters[digits..<position]), radix: 16) else {
                throw failure("hexadecimal number out of range", at: start)
            }
            return .integer(characters[start] == "-" ? -value : value)
        }
        var isReal = false
        while position < characters.count {
            let character = characters[position]
            if character.isNumber {
                position += 1
            } else if character == "." && peekIsDigit(position + 1) && !isReal {
                isReal = true
                position += 1
            } else if character.lowercased() == "e", position + 1 < characters.count,
                peekIsDigit(position + 1) || "+-".contains(characters[position + 1])
            {
                isReal = true
                position += 2
            } else {
                break
            }
        }
        let text = String(characters[start..<position])
        if !isReal, let value = Int64(text) { return .integer(value) }
        guard let value = Double(text), value.isFinite else { throw failure("number \(text) out of range", at: start) }
        return .real(value)
    }

    private mutating func quoted(_ quote: Character) throws(CoreDataError) -> Token {
        let start = position
        position += 1
        var text = ""
        while position < characters.count, characters[position] != quote {
            if characters[position] == "\\", position + 1 < characters.count {
                position += 1
                switch characters[position] {
                case "n": text.append("\n")
                case "t": text.append("\t")
                case "r": text.append("\r")
                case "0": text.append("\0")
                default: text.append(characters[position])
                }
            } else {
                text.append(characters[position])
            }
            position += 1
        }
        guard position < characters.count else { throw failure("unterminated string", at: start) }
        position += 1
        return .string(text)
    }

    private mutating func specifier() throws(CoreDataError) -> Token {
        let start = position
        position += 1
        var letters = ""
        while position < characters.count, characters[position].isLetter || characters[position] == "@" {
            letters.append(characters[position])
            position += 1
            if letters == "@" || letters == "K" { break }
            if "dDiuUfFgGeEs".contains(letters.last ?? " ") { break }
        }
        let known: Set<String> = [
            "@", "K", "d", "i", "u", "ld", "li", "lu", "lld", "lli", "llu", "hd", "hi", "hu", "f", "lf", "g", "e",
        ]
        guard known.contains(letters) else { throw failure("unknown format specifier %\(letters)", at: start) }
        return .specifier(letters)
    }

    private mutating func symbol() throws(CoreDataError) -> Token {
        let start = position
        let two = position + 1 < characters.count ? String(characters[position...position + 1]) : ""
        if ["==", "!=", "<>", "<=", "=<", ">=", "=>", "&&", "||"].contains(two) {
            position += 2
            return .symbol(two)
        }
        let one = String(characters[position])
        guard ["(", ")", "{", "}", ",", ".", "[", "]", "=", "<", ">", "!"].contains(one) else {
            throw failure("unexpected character \(one)", at: start)
        }
        position += 1
        return .symbol(one)
    }
}
