/// Why a model could not be read or is not consistent, naming the file, the entity and the property.
public struct ModelError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of problem it is; tools map kinds to exit codes.
    public enum Kind: Sendable, Equatable {
        /// A file or folder that should exist does not, or cannot be read.
        case missingFile
        /// The content is malformed or inconsistent.
        case invalidContent
    }

    /// The kind of problem.
    public var kind: Kind
    /// The file (or folder) the problem is in.
    public var file: String
    /// The line in that file, when known.
    public var line: Int?
    /// The entity concerned, when there is one.
    public var entity: String?
    /// The attribute or relationship concerned, when there is one.
    public var property: String?
    /// What is wrong.
    public var message: String

    /// Creates an error.
    public init(
        _ kind: Kind = .invalidContent,
        file: String,
        line: Int? = nil,
        entity: String? = nil,
        property: String? = nil,
        message: String
    ) {
        self.kind = kind
        self.file = file
        self.line = line
        self.entity = entity
        self.property = property
        self.message = message
    }

    /// `file:line: entity E, property P: message`.
    public var description: String {
        var text = file
        if let line { text += ":\(line)" }
        text += ": "
        if let entity {
            text += "entity \(entity)"
            if let property { text += ", property \(property)" }
            text += ": "
        }
        return text + message
    }
}
