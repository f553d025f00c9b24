/// A self-describing JSON form of attribute values, exact for every case: `{"date": 817727875.6453141}`,
/// `{"uuid": "…"}`, `{"binary": "<base64>"}`, `{"decimal": "10.11"}`; `null` for `.null`. Non-finite
/// doubles are written as the strings `"nan"`, `"inf"`, `"-inf"`.
extension AttributeValue: Codable {
    private enum Key: String, CodingKey {
        case integer, boolean, double, decimal, date, string, uuid, uri, binary, transformable, externalReference
    }

    public func encode(to encoder: any Encoder) throws {
        if case .null = self {
            var container = encoder.singleValueContainer()
            try container.encodeNil()
            return
        }
        var container = encoder.container(keyedBy: Key.self)
        switch self {
        case .null: break
        case .integer(let number): try container.encode(number, forKey: .integer)
        case .boolean(let flag): try container.encode(flag, forKey: .boolean)
        case .double(let number): try Self.encode(number, in: &container, forKey: .double)
        case .date(let number): try Self.encode(number, in: &container, forKey: .date)
        case .decimal(let text): try container.encode(text, forKey: .decimal)
        case .string(let text): try container.encode(text, forKey: .string)
        case .uuid: try container.encode(uuidString ?? "", forKey: .uuid)
        case .uri(let text): try container.encode(text, forKey: .uri)
        case .binary(let bytes): try container.encode(Base64.encode(bytes), forKey: .binary)
        case .transformable(let bytes): try container.encode(Base64.encode(bytes), forKey: .transformable)
        case .externalReference(let bytes): try container.encode(Base64.encode(bytes), forKey: .externalReference)
        }
    }

    public init(from decoder: any Decoder) throws {
        if let single = try? decoder.singleValueContainer(), single.decodeNil() {
            self = .null
            return
        }
        let container = try decoder.container(keyedBy: Key.self)
        guard let key = container.allKeys.first, container.allKeys.count == 1 else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "expected one type key")
            )
        }
        func bytes() throws -> [UInt8] {
            guard let decoded = Base64.decode(try container.decode(String.self, forKey: key)) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "invalid base64")
            }
            return decoded
        }
        switch key {
        case .integer: self = .integer(try container.decode(Int64.self, forKey: key))
        case .boolean: self = .boolean(try container.decode(Bool.self, forKey: key))
        case .double: self = .double(try Self.decodeDouble(container, key))
        case .date: self = .date(try Self.decodeDouble(container, key))
        case .decimal: self = .decimal(try container.decode(String.self, forKey: key))
        case .string: self = .string(try container.decode(String.self, forKey: key))
        case .uri: self = .uri(try container.decode(String.self, forKey: key))
        case .uuid:
            guard let parsed = UUIDText.bytes(try container.decode(String.self, forKey: key)) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "invalid UUID")
            }
            self = .uuid(parsed)
        case .binary: self = .binary(try bytes())
        case .transformable: self = .transformable(try bytes())
        case .externalReference: self = .externalReference(try bytes())
        }
    }

    private static func encode(
        _ number: Double,
        in container: inout KeyedEncodingContainer<Key>,
        forKey key: Key
    ) throws {
        if number.isNaN {
            try container.encode("nan", forKey: key)
        } else if number.isInfinite {
            try container.encode(number > 0 ? "inf" : "-inf", forKey: key)
        } else {
            try container.encode(number, forKey: key)
        }
    }

    private static func decodeDouble(_ container: KeyedDecodingContainer<Key>, _ key: Key) throws -> Double {
        if let number = try? container.decode(Double.self, forKey: key) { return number }
        switch try container.decode(String.self, forKey: key) {
        case "nan": return .nan
        case "inf": return .infinity
        case "-inf": return -.infinity
        default: throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "not a number")
        }
    }
}

/// Canonical UUID text: 8-4-4-4-12 hexadecimal digits.
public enum UUIDText {
    /// A random (version 4, RFC 9562) UUID's 16 bytes, from the system's secure generator.
    public static func randomBytes() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        let (high, low) = (generator.next() as UInt64, generator.next() as UInt64)
        var bytes = (0..<16).map { UInt8(truncatingIfNeeded: ($0 < 8 ? high : low) >> (UInt64($0 % 8) * 8)) }
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        return bytes
    }

    /// A random (version 4) UUID in lower-case text.
    public static func random() -> String { text(randomBytes()) ?? "" }

    /// The 16 bytes of a UUID written as text (either case), or nil.
    public static func bytes(_ text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8 { bytes(utf8: $0) }
    }

    /// The 16 bytes of a UUID whose text (either case) is the UTF-8 `digits`, or nil.
    public static func bytes(utf8 digits: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard digits.count == 36 else { return nil }
        // Looked up in a table: random hex digits make a branch per digit mispredict half the time.
        var invalid: UInt8 = 0
        let bytes = hexDigits.withUnsafeBufferPointer { table in
            [UInt8](unsafeUninitializedCapacity: 16) { output, count in
                var position = 0
                for index in 0..<16 {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        invalid |= digits[position] == UInt8(ascii: "-") ? 0 : 0x10
                        position += 1
                    }
                    let high = table[Int(digits[position])]
                    let low = table[Int(digits[position + 1])]
                    invalid |= high | low
                    output[index] = high << 4 | low
                    position += 2
                }
                count = 16
            }
        }
        return invalid & 0xF0 == 0 ? bytes : nil
    }

    /// Lower-case canonical text of 16 bytes.
    public static func text(_ bytes: [UInt8]) -> String? {
        guard bytes.count == 16 else { return nil }
        return String(unsafeUninitializedCapacity: 36) { output in
            let digits: StaticString = "0123456789abcdef"
            var position = 0
            for (index, byte) in bytes.enumerated() {
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    output[position] = UInt8(ascii: "-")
                    position += 1
                }
                digits.withUTF8Buffer { hex in
                    output[position] = hex[Int(byte >> 4)]
                    output[position + 1] = hex[Int(byte & 0x0F)]
                }
                position += 2
            }
            return position
        }
    }

    /// By character: its hex digit's value, or 0xFF.
    private static let hexDigits: [UInt8] = (0...255).map { hexValue(UInt8($0)) ?? 0xFF }

    private static func hexValue(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension AttributeValue {
    /// Appends the value in its self-describing JSON form (what `Codable` writes, read back by it) to
    /// `output`, built directly: for writers of many values, where an encoder per value would cost more
    /// than the write itself.
    public func appendTaggedJSON(to output: inout [UInt8]) {
        func tag(_ name: String) { output += Array("{\"\(name)\":".utf8) }
        func number(_ value: Double) {
            let text = value.isNaN ? "\"nan\"" : value.isInfinite ? (value > 0 ? "\"inf\"" : "\"-inf\"") : "\(value)"
            output += Array(text.utf8)
        }
        switch self {
        case .null:
            output += Array("null".utf8)
            return
        case .integer(let value):
            tag("integer")
            output += Array(String(value).utf8)
        case .boolean(let flag):
            tag("boolean")
            output += Array((flag ? "true" : "false").utf8)
        case .double(let value):
            tag("double")
            number(value)
        case .date(let value):
            tag("date")
            number(value)
        case .decimal(let text):
            tag("decimal")
            JSONText.append(text, to: &output)
        case .string(let text):
            tag("string")
            JSONText.append(text, to: &output)
        case .uuid:
            tag("uuid")
            JSONText.append(uuidString ?? "", to: &output)
        case .uri(let text):
            tag("uri")
            JSONText.append(text, to: &output)
        case .binary(let bytes):
            tag("binary")
            JSONText.append(Base64.encode(bytes), to: &output)
        case .transformable(let bytes):
            tag("transformable")
            JSONText.append(Base64.encode(bytes), to: &output)
        case .externalReference(let bytes):
            tag("externalReference")
            JSONText.append(Base64.encode(bytes), to: &output)
        }
        output.append(UInt8(ascii: "}"))
    }
}
