/// One SQLite value in one of the five storage classes.
///
/// See https://www.sqlite.org/datatype3.html. Blobs are byte arrays so this layer needs no Foundation.
public enum SQLiteValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    /// The storage class name as `typeof()` would print it.
    public var storageClass: String {
        switch self {
        case .null: "null"
        case .integer: "integer"
        case .real: "real"
        case .text: "text"
        case .blob: "blob"
        }
    }

    /// True for `.null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The integer value, or nil for any other storage class.
    public var integerValue: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    /// The value as a Double for `.integer` or `.real`, nil otherwise.
    public var numericValue: Double? {
        switch self {
        case .integer(let value): Double(value)
        case .real(let value): value
        default: nil
        }
    }

    /// The text value, or nil for any other storage class.
    public var textValue: String? {
        if case .text(let value) = self { return value }
        return nil
    }

    /// The blob value, or nil for any other storage class.
    public var blobValue: [UInt8]? {
        if case .blob(let value) = self { return value }
        return nil
    }
}

extension SQLiteValue: ExpressibleByIntegerLiteral, ExpressibleByStringLiteral, ExpressibleByFloatLiteral,
    ExpressibleByNilLiteral
{
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(stringLiteral value: String) { self = .text(value) }
    public init(floatLiteral value: Double) { self = .real(value) }
    public init(nilLiteral: ()) { self = .null }
}
