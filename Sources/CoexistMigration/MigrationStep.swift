public import CoexistSQLite

/// One SQL statement of a migration, with its bound arguments.
public struct MigrationStatement: Sendable, Hashable {
    /// The SQL text.
    public var sql: String
    /// Values bound to its `?` parameters, in order.
    public var arguments: [SQLiteValue]

    /// Creates a statement.
    public init(_ sql: String, _ arguments: [SQLiteValue] = []) {
        self.sql = sql
        self.arguments = arguments
    }

    /// The statement as text, its arguments written in as SQL literals (for `--sql`); a long text or blob
    /// (a model's JSON, a plist) is shown by its size.
    public var display: String {
        var result = ""
        var remaining = arguments[...]
        var inString = false
        var inIdentifier = false
        for character in sql {
            if character == "'" && !inIdentifier { inString.toggle() }
            if character == "\"" && !inString { inIdentifier.toggle() }
            if character == "?" && !inString && !inIdentifier, let value = remaining.popFirst() {
                result += Self.literal(value)
            } else {
                result.append(character)
            }
        }
        return result
    }

    private static func literal(_ value: SQLiteValue) -> String {
        switch value {
        case .null: "NULL"
        case .integer(let number): String(number)
        case .real(let number): "\(number)"
        case .text(let text) where text.count > 200: "'…' /* \(text.utf8.count) bytes of text */"
        case .text(let text): "'" + String(text.flatMap { $0 == "'" ? ["'", "'"] : [$0] }) + "'"
        case .blob(let bytes) where bytes.count > 100: "X'…' /* \(bytes.count) bytes */"
        case .blob(let bytes): "X'" + bytes.map { byte in String(byte, radix: 16).leftPadded(2) }.joined() + "'"
        }
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }

    /// The string as a quoted SQL identifier.
    var quotedIdentifier: String { SQLIdentifier.quoted(self) }
}

extension Array {
    /// The elements that satisfy `belongs`, then the others, each in order.
    func partitioned(_ belongs: (Element) -> Bool) -> ([Element], [Element]) {
        (filter(belongs), filter { !belongs($0) })
    }
}
