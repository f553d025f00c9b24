/// Why a model cannot be mapped to the new schema, naming the entity and property.
public struct SchemaError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The entity concerned.
    public var entity: String?
    /// The property concerned.
    public var property: String?
    /// What is wrong.
    public var message: String

    /// Creates an error.
    public init(entity: String? = nil, property: String? = nil, _ message: String) {
        self.entity = entity
        self.property = property
        self.message = message
    }

    public var description: String {
        var text = "new schema: "
        if let entity { text += "entity \(entity)" + (property.map { ", property \($0)" } ?? "") + ": " }
        return text + message
    }
}
