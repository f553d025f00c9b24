import CoexistSQLite

/// Columns the store's own persistent triggers write: Core Data's `Z_DA_*` for derived attributes, and
/// others an app's model declares (Photos 26.1: `ZT_ZPERSON_ZFACECOUNT_…` keep `Person.faceCount` the count of
/// its visible faces). Such a value is the triggers', never a writer's: the bridge copies it to the new side
/// after every mirror, and never writes it into the legacy tables.
enum TriggerMaintainedColumns {
    /// The `(table, column)` pairs set by an `UPDATE … SET` in any trigger of the store.
    static func read(_ connection: Connection) throws -> Set<[String]> {
        var found: Set<[String]> = []
        for row in try connection.rows("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND sql IS NOT NULL") {
            guard let sql = row[0].textValue else { continue }
            found.formUnion(assignments(in: sql))
        }
        return found
    }

    /// Every `UPDATE table SET column = …[, column = …]` of `sql`, upper-cased names.
    static func assignments(in sql: String) -> Set<[String]> {
        let tokens = tokenize(sql)
        var found: Set<[String]> = []
        var index = 0
        while index + 3 < tokens.count {
            guard tokens[index] == "UPDATE", isName(tokens[index + 1]), tokens[index + 2] == "SET" else {
                index += 1
                continue
            }
            let table = unquoted(tokens[index + 1])
            index += 3
            var depth = 0
            var expectingColumn = true
            while index < tokens.count {
                let token = tokens[index]
                if depth == 0 && ["WHERE", "FROM", ";", "END", "RETURNING"].contains(token) { break }
                if token == "(" { depth += 1 }
                if token == ")" { depth -= 1 }
                if depth == 0 && token == "," { expectingColumn = true }
                if expectingColumn && isName(token) && index + 1 < tokens.count && tokens[index + 1] == "=" {
                    found.insert([table, unquoted(token)])
                    expectingColumn = false
                }
                index += 1
            }
        }
        return found
    }

    /// Identifiers and keywords upper-cased, quoted names kept whole, one token per punctuation mark;
    /// string literals skipped.
    private static func tokenize(_ sql: String) -> [String] {
        var tokens: [String] = []
        var current = ""
        var quote: Character?
        func flush() {
            if !current.isEmpty { tokens.append(current.uppercased()) }
            current = ""
        }
        for character in sql {
            if let open = quote {
                current.append(character)
                if character == (open == "[" ? "]" : open) {
                    quote = nil
                    if open == "'" { current = "" } else { flush() }
                }
                continue
            }
            switch character {
            case "\"", "`", "[", "'":
                flush()
                quote = character
                current.append(character)
            case _ where character.isLetter || character.isNumber || character == "_" || character == "$":
                current.append(character)
            case _ where character.isWhitespace:
                flush()
            default:
                flush()
                tokens.append(String(character))
            }
        }
        flush()
        return tokens
    }

    private static func isName(_ token: String) -> Bool {
        guard let first = token.first else { return false }
        return first.isLetter || first == "_" || first == "\"" || first == "`" || first == "["
    }

    private static func unquoted(_ token: String) -> String {
        guard let first = token.first, ["\"", "`", "["].contains(first), token.count >= 2 else { return token }
        return String(token.dropFirst().dropLast())
    }
}
