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
