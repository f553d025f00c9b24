public import CoexistModel
import CoexistStore
public import FoundationEssentials

/// A Swift type that a record property can have: it converts to and from ``AttributeValue`` exactly.
public protocol AttributeConvertible {
    /// The value, or nil when `value` is not of this type (or is `.null` for a non-optional type).
    init?(attributeValue value: AttributeValue)
    /// The attribute value of `self`.
    var attributeValue: AttributeValue { get }
}

extension String: AttributeConvertible {
    public init?(attributeValue value: AttributeValue) {
        switch value {
        case .string(let text), .uri(let text), .decimal(let text): self = text
        default: return nil
        }
    }
    public var attributeValue: AttributeValue { .string(self) }
}

extension Bool: AttributeConvertible {
    public init?(attributeValue value: AttributeValue) {
        guard case .boolean(let flag) = value else { return nil }
        self = flag
    }
    public var attributeValue: AttributeValue { .boolean(self) }
}

extension Int: AttributeConvertible {
    public init?(attributeValue value: AttributeValue) {
        guard case .integer(let number) = value, let exact = Int(exactly: number) else { return nil }
        self = exact
    }
    public var attributeValue: AttributeValue { .integer(Int64(self)) }
}

extension Int16: AttributeConvertible {
    public init?(attributeValue value: AttributeValue) {
        guard case .integer(let number) = value, let exact = Int16(exactly: number) else { return nil }
        self = exact
    }
    public var attributeValue: AttributeValue { .integer(Int64(self)) }
}

extension Int32: AttributeConvertible {
    public init?(attributeValue value: AttributeValue) {
        guard case .integer(let number) = value, let exact = Int32(exactly: number) else { return nil }
        self = exact
    }
    public var attributeValue: AttributeValue { .integer(Int64(self)) }
}

extension Int64: AttributeConvertible {
    public init?(attributeValue value: AttributeValue) {
        guard case .integer(let number) = value else { return nil }
        self = number
    }
    public var attributeValue: AttributeValue { .integer(self) }
}

extension Double: AttributeConvertible {
    public init?(attributeValue value: AttributeValue) {
        guard case .double(let number) = value else { return nil }
        self = number
    }
    public var attributeValue: AttributeValue { .double(self) }
}

extension Float: AttributeConvertible {
    public init?(attributeValue value: AttributeValue) {
        guard case .double(let number) = value else { return nil }
        self = Float(number)
    }
    public var attributeValue: AttributeValue { .double(Double(self)) }
}

extension Date: AttributeConvertible {
    public init?(attributeValue value: AttributeValue) {
        guard case .date(let seconds) = value else { return nil }
        self = Date(timeIntervalSinceReferenceDate: seconds)
    }
    public var attributeValue: AttributeValue { .date(timeIntervalSinceReferenceDate) }
}

extension UUID: AttributeConvertible {
    public init?(attributeValue value: AttributeValue) {
        guard case .uuid(let bytes) = value, bytes.count == 16 else { return nil }
        self = UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
                bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            )
        )
    }
    public var attributeValue: AttributeValue { .uuid(withUnsafeBytes(of: uuid) { Array($0) }) }
}

extension Data: AttributeConvertible {
    public init?(attributeValue value: AttributeValue) {
        switch value {
        case .binary(let bytes), .transformable(let bytes), .externalReference(let bytes): self = Data(bytes)
        default: return nil
        }
    }
    public var attributeValue: AttributeValue { .binary(Array(self)) }
}

extension URL: AttributeConvertible {
    public init?(attributeValue value: AttributeValue) {
        guard case .uri(let text) = value, let url = URL(string: text) else { return nil }
        self = url
    }
    public var attributeValue: AttributeValue { .uri(absoluteString) }
}

extension Decimal: AttributeConvertible {
    public init?(attributeValue value: AttributeValue) {
        guard case .decimal(let text) = value, let decimal = Decimal(string: text) else { return nil }
        self = decimal
    }
    public var attributeValue: AttributeValue { .decimal(description) }
}

extension Optional: AttributeConvertible where Wrapped: AttributeConvertible {
    public init?(attributeValue value: AttributeValue) {
        if case .null = value {
            self = .none
            return
        }
        guard let wrapped = Wrapped(attributeValue: value) else { return nil }
        self = .some(wrapped)
    }
    public var attributeValue: AttributeValue { self?.attributeValue ?? .null }
}
