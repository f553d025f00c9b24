public import CoexistModel

/// The names of one entity's stored attributes in the order a row decoder reads them, shared by every row
/// it decodes: a row then holds its values in an array, not in a dictionary of its own.
public final class AttributeSlots: Sendable {
    /// The attribute names, inherited ones included, in slot order.
    public let names: [String]
    /// The attributes' types, in slot order.
    public let types: [AttributeType]
    private let slots: [String: Int]

    init(_ names: [String], types: [AttributeType]) {
        self.names = names
        self.types = types
        var slots: [String: Int] = [:]
        slots.reserveCapacity(names.count)
        for (slot, name) in names.enumerated() { slots[name] = slot }
        self.slots = slots
    }

    /// The slot of the attribute `name`, or nil when the entity stores no such attribute. A short list is
    /// searched in order: comparing a few short names costs less than hashing one.
    public func slot(of name: String) -> Int? {
        if names.count <= Self.scanned { return names.firstIndex(of: name) }
        return slots[name]
    }

    /// The most names ``slot(of:)`` searches in order.
    static let scanned = 12
}

/// One object read from a Core Data store with its attributes by slot: what a context holding many objects
/// keeps (no dictionary per object). ``LegacyObject`` is the same object with its attributes by name.
public struct SlottedObject: Sendable {
    /// The object's identity.
    public let id: ObjectID
    /// `Z_OPT`.
    public let version: Int64
    /// The names of ``values``' slots.
    public let slots: AttributeSlots
    /// Every stored attribute, in ``slots`` order (`.null` when unset).
    public let values: [AttributeValue]
    /// Every to-one relationship that is set, by name.
    public let toOne: [String: ObjectID]

    /// The stored value of the attribute `name`, or nil when the entity stores no such attribute.
    public subscript(attribute name: String) -> AttributeValue? { slots.slot(of: name).map { values[$0] } }
}

extension LegacyObject {
    /// The same object with its attributes by name.
    public init(_ slotted: SlottedObject) {
        var attributes: [String: AttributeValue] = [:]
        attributes.reserveCapacity(slotted.values.count)
        for (name, value) in zip(slotted.slots.names, slotted.values) { attributes[name] = value }
        self.init(id: slotted.id, version: slotted.version, attributes: attributes, toOne: slotted.toOne)
    }
}
