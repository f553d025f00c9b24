public import CoexistModel
public import CoexistSQLite

/// Converts between Core Data's stored SQLite values and ``AttributeValue`` for one attribute type.
///
/// Decoding accepts what real stores contain — dates and decimals as REAL or INTEGER (NUMERIC affinity),
/// UUIDs as 16-byte blobs — and refuses anything else with ``Failure`` naming the expected form.
/// Encoding gives the storage class Core Data writes, so `encode(decode(x)) == x` for every valid stored
/// value (a whole REAL date comes back as INTEGER, exactly as SQLite's NUMERIC affinity stores it).
public enum AttributeCodec {
    /// A stored value that does not fit the attribute's type.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The stored storage class (`text`, `blob`, …).
        public var storageClass: String
        /// The attribute type it should have matched.
        public var type: AttributeType
        /// Why the value was refused.
        public var reason: String

        public var description: String {
            "a \(storageClass) value cannot be a \(type.xmlName) (\(reason))"
        }
    }

    /// Decodes a stored value of an attribute.
    public static func decode(_ value: SQLiteValue, as attribute: Attribute) throws(Failure) -> AttributeValue {
        try decode(value, type: attribute.type, external: attribute.allowsExternalBinaryDataStorage)
    }

    /// Decodes a stored value of an attribute of `type` (`external`: binary data that may be stored outside
    /// the row): what a row decoder keeps of each attribute, so that no attribute description is copied per row.
    static func decode(_ value: SQLiteValue, type: AttributeType, external: Bool) throws(Failure) -> AttributeValue {
        func refuse(_ reason: String) -> Failure {
            Failure(storageClass: value.storageClass, type: type, reason: reason)
        }
        if case .null = value { return .null }
        switch type {
        case .integer16, .integer32, .integer64:
            guard case .integer(let number) = value else { throw refuse("expected an integer") }
            return .integer(number)
        case .boolean:
            guard case .integer(let number) = value, number == 0 || number == 1 else { throw refuse("expected 0 or 1") }
            return .boolean(number == 1)
        case .double, .float:
            guard let number = value.numericValue else { throw refuse("expected a number") }
            return .double(number)
        case .decimal:
            switch value {
            case .integer(let number): return .decimal(String(number))
            case .real(let number): return .decimal(DecimalText.text(number))
            default: throw refuse("expected a number")
            }
        case .date:
            guard let number = value.numericValue else { throw refuse("expected seconds since 2001") }
            return .date(number)
        case .string:
            guard case .text(let text) = value else { throw refuse("expected text") }
            return .string(text)
        case .uri:
            guard case .text(let text) = value else { throw refuse("expected text") }
            return .uri(text)
        case .uuid:
            if case .blob(let bytes) = value, bytes.count == 16 { return .uuid(bytes) }
            throw refuse("expected a 16-byte blob")
        case .binary:
            guard case .blob(let bytes) = value else { throw refuse("expected a blob") }
            return external ? ExternalBinary.decode(bytes) : .binary(bytes)
        case .transformable, .objectID, .composite, .undefined:
            guard case .blob(let bytes) = value else { throw refuse("expected a blob") }
            return .transformable(bytes)
        }
    }

    /// Decodes column `position` of `row` as ``decode(_:type:external:)`` decodes its value; a string,
    /// integer, boolean, number or date attribute's text, integer or real is read as such, without an SQLite
    /// value made first (a row's most common columns).
    static func decode(
        _ row: Row,
        at position: Int,
        type: AttributeType,
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
        return try decode(row[position], type: type, external: external)
    }

    /// Encodes a value as Core Data stores it. Throws when the value's kind does not match the type.
    public static func encode(_ value: AttributeValue, as attribute: Attribute) throws(Failure) -> SQLiteValue {
        func refuse() -> Failure {
            Failure(storageClass: "\(value)", type: attribute.type, reason: "the value's kind does not match")
        }
        switch (attribute.type, value) {
        case (_, .null): return .null
        case (.integer16, .integer(let number)):
            guard Int16(exactly: number) != nil else {
                throw Failure(storageClass: "integer", type: .integer16, reason: "\(number) is out of range")
            }
            return .integer(number)
        case (.integer32, .integer(let number)):
            guard Int32(exactly: number) != nil else {
                throw Failure(storageClass: "integer", type: .integer32, reason: "\(number) is out of range")
            }
            return .integer(number)
        case (.integer64, .integer(let number)): return .integer(number)
        case (.boolean, .boolean(let flag)): return .integer(flag ? 1 : 0)
        case (.double, .double(let number)), (.float, .double(let number)): return .real(number)
        case (.date, .date(let number)): return numeric(number)
        case (.decimal, .decimal(let text)):
            guard let stored = DecimalText.stored(text) else {
                throw Failure(storageClass: "text", type: .decimal, reason: "\"\(text)\" is not a decimal number")
            }
            return stored
        case (.string, .string(let text)), (.uri, .uri(let text)): return .text(text)
        case (.uuid, .uuid(let bytes)):
            guard bytes.count == 16 else { throw refuse() }
            return .blob(bytes)
        case (.binary, .binary(let bytes)):
            return .blob(bytes)
        case (.binary, .externalReference(let bytes)): return .blob(bytes)
        case (.transformable, .transformable(let bytes)), (.objectID, .transformable(let bytes)),
            (.composite, .transformable(let bytes)), (.undefined, .transformable(let bytes)):
            return .blob(bytes)
        default: throw refuse()
        }
    }

    /// A number as a NUMERIC-affinity column keeps it: whole values that fit Int64 become INTEGER.
    static func numeric(_ number: Double) -> SQLiteValue {
        if number.isFinite, number == number.rounded(), abs(number) < 9.2e18, let whole = Int64(exactly: number) {
            return .integer(whole)
        }
        return .real(number)
    }
}

/// Values of Binary attributes that allow external storage. Core Data's framing is [Unconfirmed]
/// (coredata-sqlite-format.md §3: a marker byte, 0x01 then the bytes inline, or 0x02 then the name of a file
/// in `.<Store>_SUPPORT/_EXTERNAL_DATA/`), so values are never rewritten: a value whose first byte is 0x02 is
/// reported as an external reference, everything else is kept whole, marker included.
enum ExternalBinary {
    static func decode(_ bytes: [UInt8]) -> AttributeValue {
        bytes.first == 0x02 ? .externalReference(bytes) : .binary(bytes)
    }
}

/// Decimal values as exact text: an integer's digits, or a double's shortest round-tripping form.
public enum DecimalText {
    /// The text of a stored REAL: Swift's shortest representation that reads back as the same double.
    public static func text(_ number: Double) -> String {
        if number.isNaN { return "nan" }
        if number.isInfinite { return number > 0 ? "inf" : "-inf" }
        return String(number)
    }

    /// The value Core Data's NUMERIC-affinity column keeps for decimal `text`: INTEGER for integer text,
    /// else REAL (a whole REAL that fits Int64 becomes INTEGER, as SQLite stores it). Nil for non-numbers.
    public static func stored(_ text: String) -> SQLiteValue? {
        if let integer = Int64(text) { return .integer(integer) }
        switch text {
        case "nan": return .real(.nan)
        case "inf": return .real(.infinity)
        case "-inf": return .real(-.infinity)
        default: break
        }
        guard let number = Double(text) else { return nil }
        return AttributeCodec.numeric(number)
    }
}
