/// The type of a Core Data attribute, with its `NSAttributeType` code and its name in model XML.
///
/// Codes and XML names are in coredata-sqlite-format.md §3 and §5.
public enum AttributeType: String, Sendable, Hashable, CaseIterable, Codable {
    case integer16, integer32, integer64, decimal, double, float, string, boolean, date, binary, uuid, uri
    case transformable, objectID, composite, undefined

    /// The `NSAttributeType` raw value stored in compiled models and `Z_MODELCACHE`.
    public var code: Int {
        switch self {
        case .undefined: 0
        case .integer16: 100
        case .integer32: 200
        case .integer64: 300
        case .decimal: 400
        case .double: 500
        case .float: 600
        case .string: 700
        case .boolean: 800
        case .date: 900
        case .binary: 1000
        case .uuid: 1100
        case .uri: 1200
        case .transformable: 1800
        case .objectID: 2000
        case .composite: 2100
        }
    }

    /// The spelling of the `attributeType` attribute in `.xcdatamodel/contents`.
    public var xmlName: String {
        switch self {
        case .undefined: "Undefined"
        case .integer16: "Integer 16"
        case .integer32: "Integer 32"
        case .integer64: "Integer 64"
        case .decimal: "Decimal"
        case .double: "Double"
        case .float: "Float"
        case .string: "String"
        case .boolean: "Boolean"
        case .date: "Date"
        case .binary: "Binary"
        case .uuid: "UUID"
        case .uri: "URI"
        case .transformable: "Transformable"
        case .objectID: "Object ID"
        case .composite: "Composite"
        }
    }

    /// The type for an `NSAttributeType` code, or nil for an unknown code.
    public init?(code: Int) {
        guard let type = AttributeType.allCases.first(where: { $0.code == code }) else { return nil }
        self = type
    }

    /// The type for an XML `attributeType` spelling, or nil for an unknown one.
    public init?(xmlName: String) {
        guard let type = AttributeType.allCases.first(where: { $0.xmlName == xmlName }) else { return nil }
        self = type
    }

    /// The SQL column type Core Data declares for this attribute type (§1.1).
    public var legacyColumnType: String {
        switch self {
        case .integer16, .integer32, .integer64, .boolean: "INTEGER"
        case .date: "TIMESTAMP"
        case .decimal: "DECIMAL"
        case .double, .float: "FLOAT"
        case .string, .uri: "VARCHAR"
        case .binary, .transformable, .uuid, .objectID, .composite, .undefined: "BLOB"
        }
    }
}
