public import CoexistModel

/// How the new schema stores each attribute type: exact, and readable with plain SQL.
///
/// | type | column | form |
/// |---|---|---|
/// | Integer 16/32/64 | INTEGER | CHECK range for 16 and 32 bits |
/// | Boolean | INTEGER | CHECK (0, 1) |
/// | Double, Float | REAL | |
/// | Decimal | TEXT | exact decimal text (`10.11`, `-3`, `1e+20`) |
/// | Date | REAL | seconds since 2001-01-01 00:00:00 UTC, exactly as Core Data and SwiftData keep them (`datetime(x + 978307200, 'unixepoch', 'subsec')` reads it) |
/// | String, URI | TEXT | |
/// | UUID | TEXT | lower-case canonical, CHECK 36 characters |
/// | Binary, Transformable | BLOB | the bytes as they are |
///
/// NaN cannot be stored by SQLite in a REAL (it becomes NULL, on both sides alike).
public enum ValueEncoding: String, Sendable, Hashable, Codable {
    case integer16, integer32, integer64, boolean, real, decimalText, dateReal, text, uuidText, blob

    /// The encoding of an attribute type.
    public init(_ type: AttributeType) {
        switch type {
        case .integer16: self = .integer16
        case .integer32: self = .integer32
        case .integer64: self = .integer64
        case .boolean: self = .boolean
        case .double, .float: self = .real
        case .decimal: self = .decimalText
        case .date: self = .dateReal
        case .string, .uri: self = .text
        case .uuid: self = .uuidText
        case .binary, .transformable, .objectID, .composite, .undefined: self = .blob
        }
    }

    /// The STRICT column type.
    public var sqlType: String {
        switch self {
        case .integer16, .integer32, .integer64, .boolean: "INTEGER"
        case .real, .dateReal: "REAL"
        case .decimalText, .text, .uuidText: "TEXT"
        case .blob: "BLOB"
        }
    }

    /// The CHECK expression for a column named `column` (already quoted), if the encoding has one.
    public func check(_ column: String) -> String? {
        switch self {
        case .integer16: "\(column) BETWEEN -32768 AND 32767"
        case .integer32: "\(column) BETWEEN -2147483648 AND 2147483647"
        case .boolean: "\(column) IN (0, 1)"
        case .uuidText: "length(\(column)) = 36"
        default: nil
        }
    }
}
