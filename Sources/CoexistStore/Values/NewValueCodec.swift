public import CoexistModel
public import CoexistSQLite

/// Converts between ``AttributeValue`` and the new schema's stored values (``ValueEncoding``).
///
/// Both directions are exact: `decode(encode(v)) == v` for every value the attribute can hold, and a value
/// the column cannot hold (an Int64 beyond an Integer 16, a UUID of the wrong length) is refused, never
/// truncated.
public enum NewValueCodec {
    /// A value refused by the codec.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// Why.
        public var reason: String
        public var description: String { reason }
    }

    /// The stored form of `value` for `attribute`.
    public static func encode(_ value: AttributeValue, as attribute: Attribute) throws(Failure) -> SQLiteValue {
        let encoding = ValueEncoding(attribute.type)
        func refuse(_ reason: String) -> Failure {
            Failure(reason: "\(attribute.type.xmlName) \(attribute.name): \(reason)")
        }
        switch (encoding, value) {
        case (_, .null): return .null
        case (.integer16, .integer(let number)):
            guard Int16(exactly: number) != nil else { throw refuse("\(number) does not fit in 16 bits") }
            return .integer(number)
        case (.integer32, .integer(let number)):
            guard Int32(exactly: number) != nil else { throw refuse("\(number) does not fit in 32 bits") }
            return .integer(number)
        case (.integer64, .integer(let number)): return .integer(number)
        case (.boolean, .boolean(let flag)): return .integer(flag ? 1 : 0)
        case (.real, .double(let number)), (.dateReal, .date(let number)): return .real(number)
        case (.decimalText, .decimal(let text)): return .text(text)
        case (.text, .string(let text)), (.text, .uri(let text)): return .text(text)
        case (.uuidText, .uuid(let bytes)):
            guard let text = UUIDText.text(bytes) else { throw refuse("a UUID has 16 bytes, not \(bytes.count)") }
            return .text(text)
        case (.blob, .binary(let bytes)), (.blob, .transformable(let bytes)), (.blob, .externalReference(let bytes)):
            return .blob(bytes)
        default: throw refuse("a \(value) value does not fit")
        }
    }

    /// The value of stored `value` for `attribute`.
    public static func decode(_ value: SQLiteValue, as attribute: Attribute) throws(Failure) -> AttributeValue {
        try decode(
            value,
            type: attribute.type,
            name: attribute.name,
            external: attribute.allowsExternalBinaryDataStorage
        )
    }

    /// Decodes a stored value of the attribute `name` of `type` (`external`: binary data that may be stored
    /// outside the row): what a row decoder keeps of each attribute, so that no attribute description is
    /// copied per row.
    static func decode(
        _ value: SQLiteValue,
        type: AttributeType,
        name: String,
        external: Bool
    ) throws(Failure) -> AttributeValue {
        let encoding = ValueEncoding(type)
        func refuse(_ reason: String) -> Failure {
            Failure(reason: "\(type.xmlName) \(name): \(reason)")
        }
        switch (encoding, value) {
        case (_, .null): return .null
        case (.integer16, .integer(let number)), (.integer32, .integer(let number)), (.integer64, .integer(let number)):
            return .integer(number)
        case (.boolean, .integer(let number)):
            guard number == 0 || number == 1 else { throw refuse("\(number) is not 0 or 1") }
            return .boolean(number == 1)
        case (.real, .real(let number)): return .double(number)
        case (.dateReal, .real(let number)): return .date(number)
        case (.real, .integer(let number)): return .double(Double(number))
        case (.dateReal, .integer(let number)): return .date(Double(number))
        case (.decimalText, .text(let text)): return .decimal(text)
        case (.text, .text(let text)): return type == .uri ? .uri(text) : .string(text)
        case (.uuidText, .text(let text)):
            guard let bytes = UUIDText.bytes(text) else { throw refuse("\"\(text)\" is not a UUID") }
            return .uuid(bytes)
        case (.blob, .blob(let bytes)):
            switch type {
            case .binary:
                return external && bytes.first == 0x02
                    ? .externalReference(bytes) : .binary(bytes)
            default: return .transformable(bytes)
            }
        default: throw refuse("a stored \(value.storageClass) does not fit")
        }
    }

    /// Decodes column `position` of `row` as ``decode(_:type:name:external:)`` decodes its value; a string,
    /// integer, boolean, number or date attribute's text, integer or real is read as such, without an SQLite
    /// value made first (a row's most common columns).
    static func decode(
        _ row: Row,
        at position: Int,
        type: AttributeType,
        name: String,
        external: Bool
    ) throws(Failure) -> AttributeValue {
        switch type {
        case .string: if let text = row.text(position) { return .string(text) }
        case .integer16, .integer32, .integer64: if let number = row.integer(position) { return .integer(number) }
        case .boolean:
            if let number = row.integer(position), number == 0 || number == 1 { return .boolean(number == 1) }
        case .double, .float: if let number = row.real(position) { return .double(number) }
        case .date: if let number = row.real(position) { return .date(number) }
        default: break
        }
        return try decode(row[position], type: type, name: name, external: external)
    }
}
