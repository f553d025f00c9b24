/// A recursive-descent parser of `NSPredicate` format strings (precedence: `NOT` over `AND` over `OR`).
struct PredicateParser {
    typealias Token = PredicateLexer.Token

    let format: String
    var arguments: [PredicateValue]
    var tokens: [(Token, Int)] = []
    var index = 0
    var nextArgument = 0
    /// How deeply parentheses, `NOT`s and `{…}` lists nest at the current token.
    var depth = 0
    /// The deepest nesting parsed: a bound on the recursion of parsing and translating alike.
    static let maximumDepth = 100

    init(format: String, arguments: [PredicateValue]) {
        self.format = format
        self.arguments = arguments
    }

    mutating func parse() throws(CoreDataError) -> PredicateNode {
        var lexer = PredicateLexer(format)
        while true {
            let token = try lexer.next()
            tokens.append(token)
            if case .end = token.0 { break }
        }
        let node = try orExpression()
        guard case .end = current else { throw failure("unexpected \(describe(current))") }
        guard nextArgument == arguments.count else {
            throw failure("\(arguments.count) arguments given, the format uses \(nextArgument)")
        }
        return node
    }

    // MARK: Tokens

    private var current: Token { tokens[index].0 }

    private func failure(_ reason: String) -> CoreDataError {
        .predicate(format: format, position: tokens[min(index, tokens.count - 1)].1, reason: reason)
    }

    private mutating func advance() { index = min(index + 1, tokens.count - 1) }

    private mutating func accept(_ token: Token) -> Bool {
        guard current == token else { return false }
        advance()
        return true
    }

    private mutating func expect(_ token: Token) throws(CoreDataError) {
        guard accept(token) else { throw failure("expected \(describe(token)), found \(describe(current))") }
    }

    private func describe(_ token: Token) -> String {
        switch token {
        case .identifier(let name): "\(name)"
        case .keyword(let word): word
        case .aggregate(let name): "@\(name)"
        case .string(let text): "\"\(text)\""
        case .integer(let number): "\(number)"
        case .real(let number): "\(number)"
        case .specifier(let letters): "%\(letters)"
        case .symbol(let symbol): "'\(symbol)'"
        case .end: "the end"
        }
    }

    private mutating func takeArgument() throws(CoreDataError) -> PredicateValue {
        guard nextArgument < arguments.count else { throw failure("more format specifiers than arguments") }
        defer { nextArgument += 1 }
        return arguments[nextArgument]
    }

    // MARK: Logic

    private mutating func orExpression() throws(CoreDataError) -> PredicateNode {
        var terms = [try andExpression()]
        while accept(.keyword("OR")) || accept(.symbol("||")) { terms.append(try andExpression()) }
        return terms.count == 1 ? terms[0] : .or(terms)
    }

    private mutating func andExpression() throws(CoreDataError) -> PredicateNode {
        var terms = [try notExpression()]
        while accept(.keyword("AND")) || accept(.symbol("&&")) { terms.append(try notExpression()) }
        return terms.count == 1 ? terms[0] : .and(terms)
    }

    /// Enters one level of nesting, refusing a format nested deeper than ``maximumDepth``.
    private mutating func nest() throws(CoreDataError) {
        depth += 1
        guard depth <= Self.maximumDepth else {
            throw failure("nested more than \(Self.maximumDepth) levels deep")
        }
    }

    private mutating func notExpression() throws(CoreDataError) -> PredicateNode {
        try nest()
        defer { depth -= 1 }
        if accept(.keyword("NOT")) || accept(.symbol("!")) { return .not(try notExpression()) }
        if accept(.keyword("TRUEPREDICATE")) { return .constant(true) }
        if accept(.keyword("FALSEPREDICATE")) { return .constant(false) }
        if accept(.symbol("(")) {
            let inner = try orExpression()
            try expect(.symbol(")"))
            return inner
        }
        return .comparison(try comparison())
    }

    // MARK: Comparisons

    private mutating func comparison() throws(CoreDataError) -> PredicateComparison {
        var quantifier = PredicateComparison.Quantifier.none
        if accept(.keyword("ANY")) || accept(.keyword("SOME")) {
            quantifier = .any
        } else if accept(.keyword("ALL")) {
            quantifier = .all
        } else if accept(.keyword("NONE")) {
            quantifier = .noneOf
        }
        let left = try operand()
        let op = try comparisonOperator()
        var caseInsensitive = false
        var diacriticInsensitive = false
        if current == .symbol("[") {
            advance()
            guard case .identifier(let letters) = current else { throw failure("expected options such as [cd]") }
            for letter in letters.lowercased() {
                switch letter {
                case "c": caseInsensitive = true
                case "d": diacriticInsensitive = true
                case "n", "l": continue
                default: throw failure("unknown comparison option \(letter)")
                }
            }
            advance()
            try expect(.symbol("]"))
        }
        let right = try operand()
        return PredicateComparison(
            quantifier: quantifier,
            left: left,
            op: op,
            caseInsensitive: caseInsensitive,
            diacriticInsensitive: diacriticInsensitive,
            right: right
        )
    }

    private mutating func comparisonOperator() throws(CoreDataError) -> PredicateComparison.Operator {
        let token = current
        advance()
        switch token {
        case .symbol("=="), .symbol("="): return .equal
        case .symbol("!="), .symbol("<>"): return .notEqual
        case .symbol("<"): return .less
        case .symbol("<="), .symbol("=<"): return .lessOrEqual
        case .symbol(">"): return .greater
        case .symbol(">="), .symbol("=>"): return .greaterOrEqual
        case .keyword(let word):
            if let op = PredicateComparison.Operator(rawValue: word), ![.equal, .notEqual].contains(op) { return op }
        default: break
        }
        index -= 1
        throw failure("expected a comparison operator, found \(describe(token))")
    }

    private mutating func operand() throws(CoreDataError) -> PredicateOperand {
        let token = current
        switch token {
        case .keyword("SUBQUERY"), .keyword("FUNCTION"):
            throw failure("\(describe(token)) expressions are not supported")
        case .keyword("SELF"):
            advance()
            return .keyPath(try keyPathRest([]))
        case .identifier(let name):
            advance()
            return .keyPath(try keyPathRest([name]))
        case .specifier("K"):
            advance()
            guard case .string(let path) = try takeArgument() else { throw failure("%K needs a key path string") }
            let parts = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard !parts.contains(where: \.isEmpty) else { throw failure("empty key path component in \(path)") }
            return .keyPath(try keyPathRest(parts))
        case .specifier(let letters):
            advance()
            let value = try takeArgument()
            if ["f", "lf", "g", "e"].contains(letters), case .integer(let number) = value {
                return .value(.real(Double(number)))
            }
            return .value(value)
        case .string(let text):
            advance()
            return .value(.string(text))
        case .integer(let number):
            advance()
            return .value(.integer(number))
        case .real(let number):
            advance()
            return .value(.real(number))
        case .keyword("TRUE"), .keyword("YES"):
            advance()
            return .value(.bool(true))
        case .keyword("FALSE"), .keyword("NO"):
            advance()
            return .value(.bool(false))
        case .keyword("NIL"), .keyword("NULL"):
            advance()
            return .value(.null)
        case .symbol("{"):
            advance()
            try nest()
            defer { depth -= 1 }
            var items: [PredicateOperand] = []
            if !accept(.symbol("}")) {
                repeat { items.append(try operand()) } while accept(.symbol(","))
                try expect(.symbol("}"))
            }
            return .aggregate(items)
        case .aggregate(let name):
            advance()
            return .keyPath(try keyPathRest(["@" + name]))
        default:
            throw failure("expected a key path or a value, found \(describe(token))")
        }
    }

    /// `.name`, `.@count` after the first component.
    private mutating func keyPathRest(_ start: [String]) throws(CoreDataError) -> [String] {
        var path = start
        while accept(.symbol(".")) {
            switch current {
            case .identifier(let name): path.append(name)
            case .aggregate(let name): path.append("@" + name)
            case .keyword(let word):
                throw failure("key path component \(word) is a reserved word: escape it as #\(word)")
            default: throw failure("expected a key path component after '.', found \(describe(current))")
            }
            advance()
        }
        return path
    }
}
