public import CoexistModel

/// The `ZCOLUMNS` bitmap of an update (coredata-sqlite-format.md §4.3, [Inferred] from three real stores).
///
/// Bits are numbered MSB-first (bit 0 is `0x80` of byte 0). The bit order of an entity is its
/// super-entity's bit order, then its own stored properties in three groups, each sorted by name: to-one
/// relationships, attributes, to-many relationships. A to-one takes one more bit for each extra column it
/// has: the entity column when its destination has sub-entities (`Z<N>_<NAME>`), the order column when its
/// inverse is an ordered to-many (`Z_FOK_<NAME>`). The length is `ceil(bits / 8)` bytes.
public struct PropertyBitmap: Sendable {
    /// Property names by bit; a polymorphic to-one appears on both of its bits.
    public let slots: [String]

    /// The bit order of `entity` in `model`.
    public init(entity: Entity, model: Model) {
        slots = Self.order(of: entity, in: model)
    }

    private static func order(of entity: Entity, in model: Model) -> [String] {
        var slots: [String] = []
        if let parentName = entity.superentity, let parent = model.entity(named: parentName) {
            slots = order(of: parent, in: model)
        }
        let byName: (String, String) -> Bool = { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        let relationships = entity.relationships.filter { !$0.isTransient }
        for relationship in relationships.filter({ !$0.isToMany }).sorted(by: { byName($0.name, $1.name) }) {
            slots.append(relationship.name)
            if let destination = model.entity(named: relationship.destination),
                !model.subentities(of: destination).isEmpty
            {
                slots.append(relationship.name)
            }
            if model.inverse(of: relationship).map({ $0.isToMany && $0.isOrdered }) ?? false {
                slots.append(relationship.name)
            }
        }
        slots += entity.attributes.filter { !$0.isTransient }.map(\.name).sorted(by: byName)
        slots += relationships.filter(\.isToMany).map(\.name).sorted(by: byName)
        return slots
    }

    /// The bitmap's length in bytes.
    public var byteCount: Int { (slots.count + 7) / 8 }

    /// The property names whose bits are set, in bit order, each once; nil when `bytes` is not this
    /// entity's bitmap (wrong length, or a bit set past the last property).
    public func decode(_ bytes: [UInt8]) -> [String]? {
        guard bytes.count == byteCount else { return nil }
        var names: [String] = []
        for (byteIndex, byte) in bytes.enumerated() where byte != 0 {
            for bit in 0..<8 where byte & (0x80 >> UInt8(bit)) != 0 {
                let slot = byteIndex * 8 + bit
                guard slot < slots.count else { return nil }
                if names.last != slots[slot] && !names.contains(slots[slot]) { names.append(slots[slot]) }
            }
        }
        return names
    }

    /// The bitmap with the bits of `properties` set. Unknown names are ignored.
    public func encode(_ properties: some Sequence<String>) -> [UInt8] {
        let wanted = Set(properties)
        var bytes = [UInt8](repeating: 0, count: byteCount)
        for (slot, name) in slots.enumerated() where wanted.contains(name) {
            bytes[slot / 8] |= 0x80 >> UInt8(slot % 8)
        }
        return bytes
    }
}

/// Which attributes an entity's tombstone columns hold: its preserved attributes, inherited ones
/// included, sorted by name; `ZTOMBSTONEn` holds the n-th (§4.4).
public struct TombstoneLayout: Sendable {
    /// Attribute names by tombstone index.
    public let attributes: [Attribute]

    /// The layout of `entity` in `model`.
    public init(entity: Entity, model: Model) {
        attributes = model.allAttributes(of: entity)
            .filter { $0.preservesValueInHistoryOnDeletion && !$0.isTransient && !$0.allowsExternalBinaryDataStorage }
            .sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
    }
}
