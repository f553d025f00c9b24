import CoexistModel

/// The model's uniqueness constraints over attributes, by entity (inherited ones included), and how a
/// mirror frees the values that move.
///
/// SQLite checks a unique index row by row, as each statement writes: when two objects swap their unique
/// values in one source save (A takes B's value while B takes A's), or one takes a value another gave up
/// in the same snapshot, writing the target one object at a time would collide although neither the source
/// nor the final target state ever breaks the constraint. So before a mirror writes its final values, every
/// object whose constrained values move first gets NULL in one moving column of each such constraint
/// (NULLs are distinct in a unique index, and no column of either schema is NOT NULL there); once every
/// object holds its final value again, the target is as unique as the source.
///
/// A pass that stopped at its change budget leaves later transactions for the next one: a value the
/// snapshot gives away may still be held, in the target, by an object whose own move is in such a later
/// transaction. That object is brought forward into the snapshot (its constrained values, or its delete,
/// from its current source state), unless the target side has a pending change of its own to them, which
/// must not be overwritten (the snapshot then fails on the collision, and its transactions are mirrored one
/// by one, the one at fault parked and retried once both sides are caught up).
struct UniqueValues {
    struct Constraint {
        /// The entity that declares it: its objects and its sub-entities' share the values.
        let owner: String
        let members: [String]
    }

    /// The object states a mirror compares, and what it may do to the target.
    struct Access<Key: Hashable> {
        /// The object's entity.
        var entity: (Key) -> String
        /// Its source attributes (nil: gone from the source) and its target attributes (nil: not in the target).
        var read: (Key) throws -> (source: [String: AttributeValue]?, target: [String: AttributeValue]?)
        /// Sets attributes of the target object.
        var update: (Key, [String: AttributeValue]) throws -> Void
        /// Target objects (as source keys; objects the source does not know are left out) of `owner`'s
        /// hierarchy holding `values`.
        var holders: (_ owner: String, _ values: [String: AttributeValue]) throws -> [Key]
        /// Whether the target side has a pending change to any of these properties of the object.
        var pendingOnTarget: (Key, [String]) throws -> Bool
        /// Deletes the target object (its source object is gone).
        var delete: (Key) throws -> Void
    }

    /// Per entity, each constraint whose members are all attributes.
    let constraints: [String: [Constraint]]

    init(model: Model) {
        var constraints: [String: [Constraint]] = [:]
        for entity in model.entities {
            let attributes = Set(model.allAttributes(of: entity).filter { !$0.isTransient }.map(\.name))
            let owned = model.ancestry(of: entity).flatMap { owner in
                owner.uniquenessConstraints.filter { constraint in
                    !constraint.isEmpty && constraint.allSatisfy { attributes.contains($0) }
                }.map { Constraint(owner: owner.name, members: $0) }
            }
            if !owned.isEmpty { constraints[entity.name] = owned }
        }
        self.constraints = constraints
    }

    /// Frees, in the target, every unique value the planned objects are about to move, bringing forward the
    /// objects outside the plan that still hold a value the plan gives away (see the type's documentation).
    func free<Key: Hashable>(_ plan: inout MirrorPlan<Key>, _ access: Access<Key>) throws {
        guard !constraints.isEmpty else { return }
        var queue = plan.order.filter { constraints[access.entity($0)] != nil }
        var deleted: Set<Key> = []
        var index = 0
        while index < queue.count {
            let key = queue[index]
            index += 1
            guard let entry = plan.entries[key], let owned = constraints[access.entity(key)] else { continue }
            let (source, target) = try access.read(key)
            guard let source else { continue }  // gone from the source: its delete is mirrored, or comes later
            let wanted = entry.inserted ? source : source.filter { entry.properties.contains($0.key) }
            let current = target ?? [:]
            if target != nil {
                let released = release(owned, current: current, wanted: wanted)
                if !released.isEmpty { try access.update(key, released) }
            }
            for constraint in owned {
                let members = constraint.members
                guard members.contains(where: { wanted[$0] != nil }) else { continue }
                let claimed = Dictionary(
                    members.map { ($0, wanted[$0] ?? current[$0] ?? .null) },
                    uniquingKeysWith: { first, _ in first }
                )
                guard target == nil || members.contains(where: { claimed[$0] != (current[$0] ?? .null) }) else {
                    continue
                }
                for holder in try access.holders(constraint.owner, claimed)
                where holder != key && !deleted.contains(holder) {
                    if let held = plan.entries[holder], held.inserted || members.allSatisfy(held.properties.contains) {
                        continue  // in the plan with these values: freed in its turn
                    }
                    guard try !access.pendingOnTarget(holder, members) else { continue }
                    if try access.read(holder).source == nil {
                        try access.delete(holder)
                        deleted.insert(holder)
                    } else {
                        plan.update(holder, members)
                        queue.append(holder)
                    }
                }
            }
        }
    }

    /// The attributes to set to NULL on a target object first: for each constraint whose value moves from
    /// `current` to `wanted` (the values the mirror is about to write; an attribute it does not write
    /// stays), one member that moves, when none is NULL now (a NULL member already keeps the tuple from
    /// colliding).
    func release(
        _ owned: [Constraint],
        current: [String: AttributeValue],
        wanted: [String: AttributeValue]
    ) -> [String: AttributeValue] {
        var released: [String: AttributeValue] = [:]
        for constraint in owned {
            let members = constraint.members
            let moving = members.filter { name in wanted[name].map { $0 != (current[name] ?? .null) } ?? false }
            guard let name = moving.first, !members.contains(where: { released[$0] != nil }),
                !members.contains(where: { (current[$0] ?? .null) == .null })
            else { continue }
            released[name] = .null
        }
        return released
    }
}
