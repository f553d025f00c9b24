/// A stored or transient attribute of an entity.
public struct Attribute: Sendable, Hashable, Codable {
    /// The property name, as in the model (`createdAt`).
    public var name: String
    /// The attribute type.
    public var type: AttributeType
    /// Whether nil is allowed.
    public var isOptional: Bool
    /// Transient attributes have no column and never appear in history.
    public var isTransient: Bool
    /// The default value, when the model declares one.
    public var defaultValue: DefaultValue?
    /// Whether the value is kept in the history tombstone when the object is deleted
    /// (`preserveAfterDeletion="YES"`, `NSFlagsKey` bit 16).
    public var preservesValueInHistoryOnDeletion: Bool
    /// Whether large values may be stored outside the database (`allowsExternalBinaryDataStorage`).
    public var allowsExternalBinaryDataStorage: Bool
    /// The value transformer's name for Transformable attributes.
    public var valueTransformerName: String?
    /// Whether the attribute is derived (maintained by Core Data's triggers, §1.5).
    public var isDerived: Bool
    /// Whether the model asks for a single-column index on this attribute.
    public var isIndexed: Bool
    /// The name before a rename (`elementID` / `NSRenamingIdentifier`): a migrated store may keep its column.
    public var renamingIdentifier: String?

    /// Creates an attribute; only `name` and `type` are required.
    public init(
        name: String,
        type: AttributeType,
        isOptional: Bool = false,
        isTransient: Bool = false,
        defaultValue: DefaultValue? = nil,
        preservesValueInHistoryOnDeletion: Bool = false,
        allowsExternalBinaryDataStorage: Bool = false,
        valueTransformerName: String? = nil,
        isDerived: Bool = false,
        isIndexed: Bool = false,
        renamingIdentifier: String? = nil
    ) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.isTransient = isTransient
        self.defaultValue = defaultValue
        self.preservesValueInHistoryOnDeletion = preservesValueInHistoryOnDeletion
        self.allowsExternalBinaryDataStorage = allowsExternalBinaryDataStorage
        self.valueTransformerName = valueTransformerName
        self.isDerived = isDerived
        self.isIndexed = isIndexed
        self.renamingIdentifier = renamingIdentifier
    }
}

/// A default value as the model declares it.
public enum DefaultValue: Sendable, Hashable, Codable {
    case integer(Int64)
    case real(Double)
    case boolean(Bool)
    case string(String)
    /// Seconds since 2001-01-01 00:00:00 UTC.
    case date(Double)
    /// A decimal number kept as its exact decimal text.
    case decimal(String)

    /// The default as an attribute value.
    public var value: AttributeValue {
        switch self {
        case .integer(let number): .integer(number)
        case .real(let number): .double(number)
        case .boolean(let flag): .boolean(flag)
        case .string(let text): .string(text)
        case .date(let seconds): .date(seconds)
        case .decimal(let text): .decimal(text)
        }
    }
}
