/// A minimal, fast JSON writer for server messages, strings escaped per RFC 8259. Encoding each event once
/// and sharing the bytes across subscribers is what lets one thread feed a thousand of them.
public struct JSONWriter {
    /// The bytes written so far.
    public private(set) var bytes: [UInt8] = []
    private var needsComma: [Bool] = [false]
    private var afterKey = false

    /// An empty writer.
    public init() { bytes.reserveCapacity(256) }

    private mutating func prefix() {
        if afterKey {
            afterKey = false
            return
        }
        if needsComma[needsComma.count - 1] { bytes.append(0x2C) }
        needsComma[needsComma.count - 1] = true
    }

    /// Starts an object.
    public mutating func beginObject() {
        prefix()
        bytes.append(0x7B)
        needsComma.append(false)
    }

    /// Ends the current object.
    public mutating func endObject() {
        bytes.append(0x7D)
        needsComma.removeLast()
    }

    /// Starts an array.
    public mutating func beginArray() {
        prefix()
        bytes.append(0x5B)
        needsComma.append(false)
    }

    /// Ends the current array.
    public mutating func endArray() {
        bytes.append(0x5D)
        needsComma.removeLast()
    }

    /// Writes `"name":` for a key the code names (a literal); the next value belongs to it. Its bytes are
    /// copied as they are unless one needs escaping: no scan of a `String`'s UTF-8 view per key.
    public mutating func key(_ name: StaticString) {
        prefix()
        let plain = name.withUTF8Buffer { utf8 in
            for byte in utf8 where byte < 0x20 || byte == 0x22 || byte == 0x5C { return false }
            bytes.append(0x22)
            bytes.append(contentsOf: utf8)
            bytes.append(0x22)
            return true
        }
        if !plain { escape(name.description) }
        bytes.append(0x3A)
        afterKey = true
    }

    /// Writes `"name":` for a key made at run time (an attribute's name); the next value belongs to it.
    public mutating func key(named name: String) {
        prefix()
        escape(name)
        bytes.append(0x3A)
        afterKey = true
    }

    /// A string value.
    public mutating func string(_ text: String) {
        prefix()
        escape(text)
    }

    /// An integer value, written digit by digit (no string made first).
    public mutating func integer(_ value: Int64) {
        prefix()
        if value < 0 { bytes.append(0x2D) }
        var magnitude = value.magnitude
        let start = bytes.count
        repeat {
            bytes.append(0x30 + UInt8(magnitude % 10))
            magnitude /= 10
        } while magnitude > 0
        bytes[start...].reverse()
    }

    /// A number (non-finite numbers are written as strings: JSON has none).
    public mutating func number(_ value: Double) {
        guard value.isFinite else {
            string(String(value))
            return
        }
        prefix()
        bytes += Array(String(value).utf8)
    }

    /// A boolean.
    public mutating func bool(_ value: Bool) {
        prefix()
        bytes.append(contentsOf: value ? Self.trueBytes : Self.falseBytes)
    }

    /// `null`.
    public mutating func null() {
        prefix()
        bytes.append(contentsOf: Self.nullBytes)
    }

    private static let trueBytes = Array("true".utf8)
    private static let falseBytes = Array("false".utf8)
    private static let nullBytes = Array("null".utf8)

    /// A string or null.
    public mutating func string(_ text: String?) {
        if let text { string(text) } else { null() }
    }

    /// An integer or null.
    public mutating func integer(_ value: Int64?) {
        if let value { integer(value) } else { null() }
    }

    private static let hex = Array("0123456789abcdef".utf8)

    /// Writes `text` as a JSON string: copied whole when nothing in it needs escaping (the common case: one
    /// scan of its UTF-8 in place, then one copy), else byte by byte with `"`, `\\` and control characters
    /// escaped.
    private mutating func escape(_ text: String) {
        bytes.append(0x22)
        // In place: iterating the UTF-8 view (a small string's above all) cost more than the rest of a key.
        let copied =
            text.utf8.withContiguousStorageIfAvailable { utf8 in
                for byte in utf8 where byte < 0x20 || byte == 0x22 || byte == 0x5C { return false }
                bytes.append(contentsOf: utf8)
                return true
            } ?? false
        if copied {
            bytes.append(0x22)
            return
        }
        let hex = Self.hex
        for byte in text.utf8 {
            switch byte {
            case 0x22: bytes += [0x5C, 0x22]
            case 0x5C: bytes += [0x5C, 0x5C]
            case 0x0A: bytes += [0x5C, 0x6E]
            case 0x0D: bytes += [0x5C, 0x72]
            case 0x09: bytes += [0x5C, 0x74]
            case 0..<0x20: bytes += [0x5C, 0x75, 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            default: bytes.append(byte)
            }
        }
        bytes.append(0x22)
    }

    /// The message as one wire line (with its newline).
    public var line: [UInt8] { bytes + [0x0A] }

    /// The message as one wire line (its newline appended), leaving the writer empty: the bytes are handed
    /// over, not copied.
    public mutating func takeLine() -> [UInt8] {
        bytes.append(0x0A)
        let line = bytes
        bytes = []
        needsComma = [false]
        afterKey = false
        return line
    }

    /// A one-level object of string/integer/bool/null fields, as a wire line.
    public static func message(_ fields: KeyValuePairs<String, JSONField>) -> [UInt8] {
        message(fields: fields.map { ($0.key, $0.value) })
    }

    /// A one-level object of the fields in order, as a wire line.
    public static func message(fields: [(String, JSONField)]) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        for (name, value) in fields {
            writer.key(named: name)
            switch value {
            case .string(let text): writer.string(text)
            case .integer(let number): writer.integer(number)
            case .number(let number): writer.number(number)
            case .bool(let flag): writer.bool(flag)
            case .null: writer.null()
            }
        }
        writer.endObject()
        return writer.line
    }
}

/// A field value of a flat message.
public enum JSONField: Sendable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral {
    case string(String)
    case integer(Int64)
    case number(Double)
    case bool(Bool)
    case null

    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}
