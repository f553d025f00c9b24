/// A value decoded from a binary property list, keeping keyed-archive UIDs as such.
public indirect enum PropertyListValue: Sendable, Hashable {
    case null
    case boolean(Bool)
    case integer(Int64)
    case real(Double)
    /// Seconds since 2001-01-01 00:00:00 UTC.
    case date(Double)
    case data([UInt8])
    case string(String)
    /// An `NSKeyedArchiver` object reference: an index into `$objects`.
    case uid(Int)
    case array([PropertyListValue])
    case dictionary([String: PropertyListValue])

    /// The string, or nil.
    public var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The integer (a boolean counts as 0 or 1), or nil.
    public var integer: Int64? {
        switch self {
        case .integer(let value): value
        case .boolean(let value): value ? 1 : 0
        default: nil
        }
    }

    /// The boolean (an integer counts as non-zero), or nil.
    public var boolean: Bool? {
        switch self {
        case .boolean(let value): value
        case .integer(let value): value != 0
        default: nil
        }
    }

    /// The dictionary, or nil.
    public var dictionary: [String: PropertyListValue]? {
        if case .dictionary(let value) = self { return value }
        return nil
    }

    /// The array, or nil.
    public var array: [PropertyListValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The bytes, or nil.
    public var data: [UInt8]? {
        if case .data(let value) = self { return value }
        return nil
    }
}
