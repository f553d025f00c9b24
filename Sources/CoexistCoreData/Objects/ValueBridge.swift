import CoexistModel
import Foundation

/// Converts between the values apps handle (`String`, `Int16`…`Int64`, `Bool`, `Double`, `Float`,
/// `Decimal`, `Date`, `UUID`, `URL`, `Data`) and the store's ``AttributeValue``s, by attribute type: the
/// types Core Data's Swift code generation gives each attribute type.
enum ValueBridge {
    /// The app-facing value of a stored one.
    static func value(_ stored: AttributeValue, _ attribute: Attribute) -> Any? {
        value(stored, type: attribute.type)
    }

    /// The app-facing value of a stored one of type `type`.
    static func value(_ stored: AttributeValue, type: AttributeType) -> Any? {
        switch stored {
        case .null: return nil
        case .integer(let number):
            switch type {
            case .integer16: return Int16(truncatingIfNeeded: number)
            case .integer32: return Int32(truncatingIfNeeded: number)
            case .boolean: return number != 0
            default: return number
            }
        case .boolean(let flag): return flag
        case .double(let number): return type == .float ? Float(number) : number
        case .decimal(let text): return Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
        case .date(let seconds): return Date(timeIntervalSinceReferenceDate: seconds)
        case .string(let text): return text
        case .uuid(let bytes):
            guard bytes.count == 16 else { return nil }
            return UUID(
                uuid: (
                    bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8],
                    bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
                )
            )
        case .uri(let text): return URL(string: text)
        case .binary(let bytes), .transformable(let bytes), .externalReference(let bytes): return Data(bytes)
        }
    }

    /// The stored value for an app's value, or nil when it does not fit the attribute's type.
    static func stored(_ value: Any?, _ attribute: Attribute) -> AttributeValue? {
        guard let value else { return .null }
        switch attribute.type {
        case .integer16, .integer32, .integer64:
            guard let number = integer(value) else { return nil }
            let range: ClosedRange<Int64> =
                switch attribute.type {
                case .integer16: Int64(Int16.min)...Int64(Int16.max)
                case .integer32: Int64(Int32.min)...Int64(Int32.max)
                default: Int64.min...Int64.max
                }
            return range.contains(number) ? .integer(number) : nil
        case .boolean: return (value as? Bool).map(AttributeValue.boolean)
        case .double, .float:
            if let number = value as? Double { return .double(number) }
            if let number = value as? Float { return .double(Double(number)) }
            return integer(value).map { .double(Double($0)) }
        case .decimal:
            if let number = value as? Decimal { return .decimal(NSDecimalNumber(decimal: number).stringValue) }
            return integer(value).map { .decimal(String($0)) }
        case .date: return (value as? Date).map { .date($0.timeIntervalSinceReferenceDate) }
        case .string: return (value as? String).map(AttributeValue.string)
        case .uuid: return (value as? UUID).map { uuid in .uuid(withUnsafeBytes(of: uuid.uuid) { Array($0) }) }
        case .uri: return (value as? URL).map { .uri($0.absoluteString) }
        case .binary: return (value as? Data).map { .binary([UInt8]($0)) }
        case .transformable, .objectID, .composite, .undefined:
            return (value as? Data).map { .transformable([UInt8]($0)) }
        }
    }

    private static func integer(_ value: Any) -> Int64? {
        switch value {
        case let number as Int: Int64(number)
        case let number as Int64: number
        case let number as Int32: Int64(number)
        case let number as Int16: Int64(number)
        case let number as Int8: Int64(number)
        case let number as UInt8: Int64(number)
        case let number as UInt16: Int64(number)
        case let number as UInt32: Int64(number)
        default: nil
        }
    }
}
