/// A mapping model as Xcode writes it for a migration step (`<from>-<to>.xcmappingmodel/xcmapping.xml`):
/// how each destination entity and property is produced from the source store.
public struct MappingModel: Sendable, Hashable {
    /// One entity mapping.
    public struct EntityMapping: Sendable, Hashable {
        /// The mapping's name, as `destinationInstancesForEntityMappingNamed:` names it (`CountryToCountry`).
        public var name: String
        /// The source entity; nil for a mapping that creates its instances itself (a custom policy's).
        public var source: String?
        /// The destination entity; nil for a mapping that removes its source's instances.
        public var destination: String?
        /// Xcode's mapping type (`Undefined`, `Copy`, `Add`, `Remove`, `Transform`, `Custom`).
        public var type: String
        /// The custom entity migration policy class (`Migrations.Country5ToCountry6Policy`): code.
        public var policy: String?
        /// The destination's attributes and how each gets its value.
        public var attributes: [PropertyMapping]
        /// The destination's relationships and how each gets its value.
        public var relationships: [PropertyMapping]
    }

    /// How one destination property gets its value.
    public struct PropertyMapping: Sendable, Hashable {
        /// The destination property.
        public var name: String
        /// The value expression; nil: the source's property of the same name (what Xcode generates).
        public var value: MappingExpression?
    }

    /// Where it was read from.
    public var path: String
    /// The source and destination model paths recorded by Xcode (`Migrations/Moody.xcdatamodeld/Moody 2.xcdatamodel`).
    public var sourceModelPath: String?
    public var destinationModelPath: String?
    /// The entity mappings, in Xcode's order (`mappingnumber`).
    public var entityMappings: [EntityMapping]

    /// The mapping of destination entity `name`.
    public func mapping(destination name: String) -> EntityMapping? {
        entityMappings.first { $0.destination == name }
    }
}

/// A value expression of a property mapping: the forms Xcode's mapping editor produces.
public indirect enum MappingExpression: Sendable, Hashable, CustomStringConvertible {
    /// `$source.a.b` (or `FUNCTION($source, "valueForKeyPath:", "a.b")`): a key path from the source instance.
    case keyPath([String])
    /// `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "Name", $source.a.b)`:
    /// the destination instances entity mapping `mapping` made of the source instances at the key path.
    case destinationInstances(mapping: String, keyPath: [String])
    /// A constant.
    case constant(PropertyListValue)
    /// Anything else, described.
    case unsupported(String)

    public var description: String {
        switch self {
        case .keyPath(let path): "$source." + path.joined(separator: ".")
        case .destinationInstances(let mapping, let path):
            "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"\(mapping)\", "
                + "$source.\(path.joined(separator: ".")))"
        case .constant(let value): "constant \(value)"
        case .unsupported(let what): "unsupported expression (\(what))"
        }
    }

    /// A key path as Xcode writes it: `$source.country.continent` → `[country, continent]`.
    static func keyPath(parsing text: String) -> [String] {
        var trimmed = Substring(text)
        if trimmed.hasPrefix("$source.") { trimmed = trimmed.dropFirst("$source.".count) }
        return trimmed.split(separator: ".").map(String.init)
    }
}

/// A declared transform of one migration step (coexistd's configuration, `[migration FROM -> TO]`): values
/// for destination properties, as a mapping model's property mappings give them, for what the inferred
/// mapping gets wrong or cannot do (a value computed through a relationship, a constant for existing rows).
public struct StepTransform: Sendable, Hashable {
    /// One assignment: `Entity.property = expression`.
    public struct Assignment: Sendable, Hashable {
        public var entity: String
        public var property: String
        /// A key path from the source object (`$source.continent.numericISO3166Code`) or a constant.
        public var value: MappingExpression
        /// Where it was declared (`file:line`).
        public var location: String

        /// Creates an assignment.
        public init(entity: String, property: String, value: MappingExpression, location: String) {
            self.entity = entity
            self.property = property
            self.value = value
            self.location = location
        }
    }

    public var from: String
    public var to: String
    public var assignments: [Assignment]

    /// Creates a transform.
    public init(from: String, to: String, assignments: [Assignment]) {
        self.from = from
        self.to = to
        self.assignments = assignments
    }

    /// The expression of a declared value: `$source.a.b`, a number, `true`/`false`, `null`, or a string in
    /// double quotes (`\"` and `\\` escaped); nil when it is none of these.
    public static func expression(parsing text: String) -> MappingExpression? {
        if text.hasPrefix("$source.") {
            let path = MappingExpression.keyPath(parsing: text)
            let plain = path.allSatisfy { component in
                !component.isEmpty && component.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }
            }
            return plain && !path.isEmpty ? .keyPath(path) : nil
        }
        switch text {
        case "true": return .constant(.boolean(true))
        case "false": return .constant(.boolean(false))
        case "null": return .constant(.null)
        default: break
        }
        if let integer = Int64(text) { return .constant(.integer(integer)) }
        if let real = Double(text), real.isFinite { return .constant(.real(real)) }
        guard text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") else { return nil }
        var result = ""
        var escaped = false
        for character in text.dropFirst().dropLast() {
            if escaped {
                guard character == "\"" || character == "\\" else { return nil }
                result.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == "\"" {
                return nil
            } else {
                result.append(character)
            }
        }
        return escaped ? nil : .constant(.string(result))
    }
}
