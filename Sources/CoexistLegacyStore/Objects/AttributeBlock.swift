package import CoexistModel

/// The stored attributes of objects in one allocation, each object's a run of slots from its
/// ``BlockObject/base``: what a query that keeps many objects reads its rows into (no array per object), and
/// a read of one row its values (a block of its own, sized to it). Written as rows are decoded, then only
/// read. An object that outlives the others of its fetch keeps their whole block (4,096 values at most, or
/// one row's when wider) alive: the context holds them all together anyway, until it forgets them.
///
/// Its header (how many values it holds and has room for) is read through pointers, as its values are: the
/// buffer's `header` and `capacity` properties would cost an exclusivity check and a `malloc_usable_size`
/// call at each value.
package final class AttributeBlock: ManagedBuffer<AttributeBlock.Header, AttributeValue> {
    /// How many values the block holds, and has room for.
    package struct Header {
        var count: Int
        var capacity: Int
    }

    /// A block with room for `capacity` values, holding none yet.
    static func make(capacity: Int) -> AttributeBlock {
        let capacity = max(1, capacity)
        return unsafeDowncast(
            create(minimumCapacity: capacity) { _ in Header(count: 0, capacity: capacity) },
            to: AttributeBlock.self
        )
    }

    deinit {
        _ = withUnsafeMutablePointers { header, values in values.deinitialize(count: header.pointee.count) }
    }

    /// How many values the block holds.
    package var count: Int { withUnsafeMutablePointerToHeader { $0.pointee.count } }

    /// How many more values fit.
    var room: Int { withUnsafeMutablePointerToHeader { $0.pointee.capacity - $0.pointee.count } }

    /// How many values fit in all.
    var size: Int { withUnsafeMutablePointerToHeader { $0.pointee.capacity } }

    /// The value at `index` (an object's base plus a slot).
    package subscript(index: Int) -> AttributeValue {
        withUnsafeMutablePointers { header, values in
            precondition(index >= 0 && index < header.pointee.count, "index \(index) outside the block's values")
            return values[index]
        }
    }

    /// Adds `value` after the others; the caller made sure there is room.
    func append(_ value: AttributeValue) {
        withUnsafeMutablePointers { header, values in
            precondition(header.pointee.count < header.pointee.capacity, "no room left in the block")
            (values + header.pointee.count).initialize(to: value)
            header.pointee.count += 1
        }
    }
}

/// The block a query's rows are decoded into: a new, larger one when the current one is full.
struct AttributeBlocks {
    private var current: AttributeBlock?
    /// Whether the first block holds exactly the first row's values (a read of one row).
    private let exact: Bool

    /// Blocks for a query of many rows (`exact` false: they grow from 64 values to 4,096) or of one row.
    init(exact: Bool = false) { self.exact = exact }

    /// A block with room for `count` more values.
    mutating func room(for count: Int) -> AttributeBlock {
        if let current, current.room >= count { return current }
        // Doubling up to 4,096 values: a small query keeps a small block, a large one few blocks.
        let size = current.map { min(4_096, $0.size * 2) } ?? (exact ? count : 64)
        let block = AttributeBlock.make(capacity: max(count, size))
        current = block
        return block
    }
}

/// One object read with its attributes in an ``AttributeBlock``, shared with the other rows of its query:
/// what a caller that keeps many objects holds (one allocation for many rows' values). ``SlottedObject`` is
/// the same object with an array of its own.
package struct BlockObject {
    /// The object's identity.
    package let id: ObjectID
    /// `Z_OPT`.
    package let version: Int64
    /// The names of the object's slots.
    package let slots: AttributeSlots
    /// The block holding its attributes, in ``slots`` order from ``base``.
    package let block: AttributeBlock
    /// Where its attributes start in ``block``.
    package let base: Int
    /// Every to-one relationship that is set, by name.
    package let toOne: [String: ObjectID]
}
