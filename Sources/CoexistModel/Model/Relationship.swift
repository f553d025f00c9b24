/// What happens to the destination objects when the source object is deleted.
///
/// Raw values are Core Data's `NSDeleteRule` codes as stored in compiled models and `Z_MODELCACHE`.
public enum DeleteRule: Int, Sendable, Hashable, Codable, CaseIterable {
    /// Nothing is done: the destination keeps a dangling reference.
    case noAction = 0
    /// The destination's inverse is set to nil (or the source removed from its to-many).
    case nullify = 1
    /// The destination objects are deleted too.
    case cascade = 2
    /// The delete fails while the relationship holds any object.
    case deny = 3

    /// The spelling of `deletionRule` in model XML.
    public var xmlName: String {
        switch self {
        case .noAction: "No Action"
        case .nullify: "Nullify"
        case .cascade: "Cascade"
        case .deny: "Deny"
        }
    }

    /// The rule for an XML `deletionRule` spelling, or nil for an unknown one.
    public init?(xmlName: String) {
        guard let rule = DeleteRule.allCases.first(where: { $0.xmlName == xmlName }) else { return nil }
        self = rule
    }
}

/// A relationship from one entity to another.
public struct Relationship: Sendable, Hashable, Codable {
    /// The property name (`category`).
    public var name: String
    /// The destination entity's name.
    public var destination: String
    /// The inverse relationship's name on the destination, when there is one.
    public var inverse: String?
    /// Whether the relationship holds many objects (`maxCount` other than 1).
    public var isToMany: Bool
    /// Whether a to-many keeps its order (`Z_FOK_` columns on disk).
    public var isOrdered: Bool
    /// Whether the relationship may be empty.
    public var isOptional: Bool
    /// Transient relationships are not stored.
    public var isTransient: Bool
    /// The delete rule.
    public var deleteRule: DeleteRule
    /// Minimum count (0 for none).
    public var minCount: Int
    /// Maximum count (0 for unbounded; 1 for a to-one).
    public var maxCount: Int
    /// The name before a rename (`elementID` / `NSRenamingIdentifier`).
    public var renamingIdentifier: String?

    /// Creates a relationship; a to-one has `isToMany == false` and `maxCount == 1`.
    public init(
        name: String,
        destination: String,
        inverse: String? = nil,
        isToMany: Bool = false,
        isOrdered: Bool = false,
        isOptional: Bool = true,
        isTransient: Bool = false,
        deleteRule: DeleteRule = .nullify,
        minCount: Int = 0,
        maxCount: Int? = nil,
        renamingIdentifier: String? = nil
    ) {
        self.name = name
        self.destination = destination
        self.inverse = inverse
        self.isToMany = isToMany
        self.isOrdered = isOrdered
        self.isOptional = isOptional
        self.isTransient = isTransient
        self.deleteRule = deleteRule
        self.minCount = minCount
        self.maxCount = maxCount ?? (isToMany ? 0 : 1)
        self.renamingIdentifier = renamingIdentifier
    }
}
