/// A minimal, fast JSON writer for server messages, strings escaped per RFC 8259. Encoding each event once
/// and sharing the bytes across subscribers is what lets one thread feed a thousand of them.
public struct JSONWriter {
    /// The bytes written so far.
    public var bytes: [UInt8] { Array(UnsafeBufferPointer(start: buffer.base, count: length)) }
    /// The message in the first ``length`` bytes of ``buffer``: written in place through its pointer (an
    /// array append per byte or per key cost more than the bytes it wrote), copied when a writer copied
    /// from this one shares it.
    private var buffer: Buffer
    private var length = 0
    /// Whether the value at each depth of nesting needs a comma first: one bit per depth up to 64 (a
    /// `[Bool]` append per object cost a tenth of an event), ``deeper`` beyond.
    private var commas: UInt64 = 0
    private var depth = 0
    private var deeper: [Bool] = []
    private var afterKey = false

    /// Room for the bytes of a message, freed with the last writer holding it.
    private final class Buffer {
        let base: UnsafeMutablePointer<UInt8>
        let capacity: Int

        init(capacity: Int) {
            base = .allocate(capacity: capacity)
            self.capacity = capacity
        }

        deinit { base.deallocate() }
    }

    /// An empty writer.
    public init() { buffer = Buffer(capacity: 256) }

    /// Makes room for `count` more bytes and lets `body` write them from the pointer it is given.
    @inline(__always)
    private mutating func write(_ count: Int, _ body: (UnsafeMutablePointer<UInt8>) -> Void) {
        if buffer.capacity - length < count || !isKnownUniquelyReferenced(&buffer) { grow(to: length + count) }
        body(buffer.base + length)
        length += count
    }

    /// A buffer of this writer's own with room for `needed` bytes in all (doubling when it must grow),
    /// the message copied: also what a writer does before it first writes into a buffer a copy shares.
    private mutating func grow(to needed: Int) {
        let capacity = needed > buffer.capacity ? max(needed, buffer.capacity * 2) : buffer.capacity
        let larger = Buffer(capacity: capacity)
        larger.base.initialize(from: buffer.base, count: length)
        buffer = larger
    }

    @inline(__always)
    private mutating func append(_ byte: UInt8) { write(1) { $0.pointee = byte } }

    private mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        write(bytes.count) { $0.update(from: source, count: bytes.count) }
    }

    /// Whether the next value at the current depth needs a comma first; set for the one after it.
    @inline(__always)
    private mutating func takeComma() -> Bool {
        if depth < 64 {
            let bit: UInt64 = 1 << UInt64(depth)
            defer { commas |= bit }
            return commas & bit != 0
        }
        defer { deeper[depth - 64] = true }
        return deeper[depth - 64]
    }

    /// One level deeper (an object or array begins): its first value needs no comma.
    private mutating func enter() {
        depth += 1
        if depth < 64 { commas &= ~(1 << UInt64(depth)) } else { deeper.append(false) }
    }

    /// One level back out.
    private mutating func leave() {
        if depth >= 64 { deeper.removeLast() }
        depth -= 1
    }

    @inline(__always)
    private mutating func prefix() {
        if afterKey {
            afterKey = false
            return
        }
        if takeComma() { append(0x2C) }
    }

    /// Starts an object.
    public mutating func beginObject() {
        prefix()
        append(0x7B)
        enter()
    }

    /// Ends the current object.
    public mutating func endObject() {
        append(0x7D)
        leave()
    }

    /// Starts an array.
    public mutating func beginArray() {
        prefix()
        append(0x5B)
        enter()
    }

    /// Ends the current array.
    public mutating func endArray() {
        append(0x5D)
        leave()
    }

    /// Writes `"name":` for a key the code names (a literal); the next value belongs to it. Its bytes are
    /// copied as they are unless one needs escaping: no scan of a `String`'s UTF-8 view per key.
    public mutating func key(_ name: StaticString) {
        prefix()
        if name.hasPointerRepresentation {
            let source = name.utf8Start
            let count = name.utf8CodeUnitCount
            var plain = true
            for index in 0..<count where source[index] < 0x20 || source[index] == 0x22 || source[index] == 0x5C {
                plain = false
                break
            }
            if plain {
                write(count + 3) { output in
                    output[0] = 0x22
                    (output + 1).update(from: source, count: count)
                    output[count + 1] = 0x22
                    output[count + 2] = 0x3A
                }
                afterKey = true
                return
            }
        }
        escape(name.description)
        append(0x3A)
        afterKey = true
    }

    /// Writes `"name":` for a key made at run time (an attribute's name); the next value belongs to it.
    public mutating func key(named name: String) {
        prefix()
        escape(name)
        append(0x3A)
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
        var magnitude = value.magnitude
        var digits = 1
        var rest = magnitude / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        let sign = value < 0 ? 1 : 0
        write(sign + digits) { output in
            if sign == 1 { output[0] = 0x2D }
            var index = sign + digits - 1
            repeat {
                output[index] = 0x30 + UInt8(magnitude % 10)
                magnitude /= 10
                index -= 1
            } while magnitude > 0
        }
    }

    /// A number (non-finite numbers are written as strings: JSON has none).
    public mutating func number(_ value: Double) {
        guard value.isFinite else {
            string(String(value))
            return
        }
        prefix()
        var text = String(value)
        text.withUTF8 { append($0) }
    }

    /// A boolean.
    public mutating func bool(_ value: Bool) {
        prefix()
        (value ? Self.trueBytes : Self.falseBytes).withUnsafeBufferPointer { append($0) }
    }

    /// `null`.
    public mutating func null() {
        prefix()
        Self.nullBytes.withUnsafeBufferPointer { append($0) }
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
        append(0x22)
        // In place: iterating the UTF-8 view (a small string's above all) cost more than the rest of a key.
        let copied =
            text.utf8.withContiguousStorageIfAvailable { utf8 in
                for byte in utf8 where byte < 0x20 || byte == 0x22 || byte == 0x5C { return false }
                append(utf8)
                return true
            } ?? false
        if copied {
            append(0x22)
            return
        }
        let hex = Self.hex
        for byte in text.utf8 {
            switch byte {
            case 0x22, 0x5C, 0x0A, 0x0D, 0x09:
                // `\"`, `\\`, `\n`, `\r`, `\t`.
                let letter: UInt8 = byte == 0x0A ? 0x6E : byte == 0x0D ? 0x72 : byte == 0x09 ? 0x74 : byte
                write(2) {
                    $0[0] = 0x5C
                    $0[1] = letter
                }
            case 0..<0x20:
                write(6) {
                    $0[0] = 0x5C
                    $0[1] = 0x75
                    $0[2] = 0x30
                    $0[3] = 0x30
                    $0[4] = hex[Int(byte >> 4)]
                    $0[5] = hex[Int(byte & 0x0F)]
                }
            default: append(byte)
            }
        }
        append(0x22)
    }

    /// The message as one wire line (with its newline).
    public var line: [UInt8] { bytes + [0x0A] }

    /// The message as one wire line (its newline appended), leaving the writer empty with its room kept
    /// for the next message.
    public mutating func takeLine() -> [UInt8] {
        append(0x0A)
        let line = bytes
        length = 0
        commas = 0
        depth = 0
        deeper = []
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
