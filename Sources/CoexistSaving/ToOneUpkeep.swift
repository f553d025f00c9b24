package import CoexistModel

/// The one way both formats' saves set a to-one and keep its inverse: for a one-to-one, the target's old
/// partner loses the target and the old target loses the object; for a to-many inverse, the old and new
/// targets are recorded as changed (their to-many changed). The object itself changes last.
package enum ToOneUpkeep {
    /// Sets the to-one `name` of `id` from `current` to `target` (nothing when they are equal).
    /// `partner(target)` reads the target's current inverse (asked only for a one-to-one), `write` stores a
    /// to-one and `touch` records a changed property.
    package static func set<ID: Equatable>(
        _ id: ID,
        _ name: String,
        from current: ID?,
        to target: ID?,
        inverse: Relationship?,
        partner: (ID) throws -> ID?,
        write: (ID, String, ID?) throws -> Void,
        touch: (ID, String) throws -> Void
    ) throws {
        guard current != target else { return }
        if let inverse, !inverse.isToMany {
            if let target, let partner = try partner(target), partner != id {
                try write(partner, name, nil)
                try touch(partner, name)
            }
            if let current {
                try write(current, inverse.name, nil)
                try touch(current, inverse.name)
            }
            if let target {
                try write(target, inverse.name, id)
                try touch(target, inverse.name)
            }
        } else if let inverse {
            if let current { try touch(current, inverse.name) }
            if let target { try touch(target, inverse.name) }
        }
        try write(id, name, target)
        try touch(id, name)
    }
}
