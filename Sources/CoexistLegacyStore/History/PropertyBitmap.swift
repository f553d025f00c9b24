public import CoexistModel

/// The `ZCOLUMNS` bitmap of an update (coredata-sqlite-format.md §4.3, measured on 55 real stores).
///
/// Bits are numbered MSB-first (bit 0 is `0x80` of byte 0). The slots cover the entity's whole stored
/// property set (inherited and own as one set, transients left out, derived attributes in) in six groups:
/// (1) every to-one, (2) the to-ones whose destination has sub-entities (their `Z<N>_<NAME>` column),
/// (3) the to-ones whose inverse is an ordered to-many (their `Z_FOK_<NAME>` column), (4) the attributes —
/// each of these by name, binary order — then (5) the one-to-many relationships (inverse a to-one) and
/// (6) the many-to-many ones and the to-manys without an inverse. The order inside groups 5 and 6 is not
/// derivable from the model: the model's own property order is the first guess (§4.3), and a store's
/// history can pin it (``SlotCalibration``). The length is `ceil(slots / 8)` bytes.
public struct PropertyBitmap: Sendable {
    /// Property names by bit; a polymorphic to-one appears on its group-1 and group-2 bits, a to-one with an
    /// ordered inverse on its group-3 bit too.
    public let slots: [String]
    /// The slots of each of the six groups, in order.
    public let groups: [Range<Int>]
    /// The slots of group 5 (one-to-many) and of group 6 (many-to-many, no inverse).
    public var oneToMany: Range<Int> { groups[4] }
    public var manyToMany: Range<Int> { groups[5] }

    /// What the slots of each group hold, for reports.
    public static let groupNames = [
        "to-one", "to-one entity", "to-one order", "attribute", "one-to-many", "many-to-many",
    ]

    /// The bit order of `entity` in `model`; `oneToManyOrder` and `manyToManyOrder`, when given, order groups
    /// 5 and 6 (names they leave out follow in the model's order, names not in the group are ignored).
    public init(entity: Entity, model: Model, oneToManyOrder: [String]? = nil, manyToManyOrder: [String]? = nil) {
        let byName: (String, String) -> Bool = { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        let relationships = model.allRelationships(of: entity).filter { !$0.isTransient }
        let toOnes = relationships.filter { !$0.isToMany }.sorted { byName($0.name, $1.name) }
        let toManys = relationships.filter(\.isToMany)
        let oneToManyNames = toManys.filter { model.inverse(of: $0).map { !$0.isToMany } ?? false }.map(\.name)
        let contents: [[String]] = [
            toOnes.map(\.name),
            toOnes.filter { relationship in
                model.entity(named: relationship.destination).map { !model.subentities(of: $0).isEmpty } ?? false
            }.map(\.name),
            toOnes.filter { model.inverse(of: $0).map { $0.isToMany && $0.isOrdered } ?? false }.map(\.name),
            model.allAttributes(of: entity).filter { !$0.isTransient }.map(\.name).sorted(by: byName),
            Self.ordered(oneToManyNames, by: oneToManyOrder),
            Self.ordered(toManys.map(\.name).filter { !oneToManyNames.contains($0) }, by: manyToManyOrder),
        ]
        var slots: [String] = []
        var groups: [Range<Int>] = []
        for names in contents {
            groups.append(slots.count..<slots.count + names.count)
            slots += names
        }
        self.slots = slots
        self.groups = groups
    }

    /// `names` in the order `order` gives them, the others after in their own order.
    static func ordered(_ names: [String], by order: [String]?) -> [String] {
        guard let order else { return names }
        let first = order.filter { names.contains($0) }
        return first + names.filter { !first.contains($0) }
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
