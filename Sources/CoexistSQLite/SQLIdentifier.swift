/// Quoting and validation of SQL identifiers (table, column, index and savepoint names).
///
/// Identifiers in coexist come from a data model or a store's schema: input, not code. Every identifier
/// that reaches SQL text goes through ``quoted(_:)``; names we create ourselves must also pass
/// ``validate(_:)``, which accepts only plain ASCII names.
public enum SQLIdentifier {
    /// The identifier in double quotes, with embedded double quotes doubled
    /// (https://www.sqlite.org/lang_keywords.html).
    public static func quoted(_ name: String) -> String {
        if !name.utf8.contains(0x22) { return "\"" + name + "\"" }
        var result = "\""
        for character in name {
            if character == "\"" { result += "\"\"" } else { result.append(character) }
        }
        return result + "\""
    }

    /// Whether `name` is a plain identifier: an ASCII letter or underscore, then letters, digits or
    /// underscores, at most 128 characters.
    public static func isPlain(_ name: String) -> Bool {
        guard let first = name.utf8.first, name.utf8.count <= 128 else { return false }
        func isLetter(_ byte: UInt8) -> Bool {
            (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x5F
        }
        guard isLetter(first) else { return false }
        return name.utf8.allSatisfy { isLetter($0) || ($0 >= 0x30 && $0 <= 0x39) }
    }

    /// Throws unless `name` is a plain identifier (see ``isPlain(_:)``).
    public static func validate(_ name: String) throws(SQLiteError) {
        guard isPlain(name) else {
            throw SQLiteError(extendedCode: 1, message: "invalid SQL identifier \(String(reflecting: name))")
        }
    }
}
