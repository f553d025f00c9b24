/// An attribute's value decoded from Core Data's storage, typed by the model (coredata-sqlite-format.md §3).
public enum AttributeValue: Sendable, Hashable {
    case null
    /// Integer 16/32/64.
    case integer(Int64)
    case boolean(Bool)
    /// Double or Float.
    case double(Double)
    /// Decimal as exact decimal text (`10.11`, `-3`, `1e+20`): Core Data stores a floating-point number
    /// (or, when whole, an integer); the text is that number's shortest exact form.
    case decimal(String)
    /// Seconds since 2001-01-01 00:00:00 UTC; Core Data stores REAL, or INTEGER for whole seconds.
    case date(Double)
    case string(String)
    /// A UUID attribute: 16 raw bytes.
    case uuid([UInt8])
    /// A URI attribute: its absolute string.
    case uri(String)
    case binary([UInt8])
    /// A value transformer's output, kept as bytes (an NSKeyedArchiver plist for the default transformer).
    case transformable([UInt8])
    /// A binary value stored outside the database (`allowsExternalBinaryDataStorage`): the stored bytes,
    /// a 0x02 marker then the name of a file in `.<Store>_SUPPORT/_EXTERNAL_DATA/` ([Unconfirmed] framing).
    /// coexist keeps the reference as it is and does not read the file.
    case externalReference([UInt8])

    /// For `.externalReference`, the file name after the marker.
    public var externalFileName: String? {
        guard case .externalReference(let bytes) = self else { return nil }
        return String(decoding: bytes.dropFirst().prefix { $0 != 0 }, as: UTF8.self)
    }

    /// The UUID in canonical lower-case text, for `.uuid`.
    public var uuidString: String? {
        guard case .uuid(let bytes) = self else { return nil }
        return UUIDText.text(bytes)
    }
}
