/// The one way both formats' saves give an ordered to-many its new order.
package enum OrderedUpkeep {
    /// Positions are spaced like Core Data's order keys (1024, 2048, …) so that appends and moves rarely
    /// renumber.
    package static let step: Int64 = 1024

    /// Makes an ordered to-many that holds `current` hold exactly `targets`, in that order: `remove` takes
    /// those it no longer holds, `add` the new ones (appended); then, when the order changed, `position`
    /// numbers every target (step, 2 × step, …) and `touch` records the owner changed.
    package static func set<ID: Hashable>(
        _ targets: [ID],
        current: [ID],
        remove: ([ID]) throws -> Void,
        add: ([ID]) throws -> Void,
        position: (ID, Int64) throws -> Void,
        touch: () throws -> Void
    ) throws {
        let wanted = Set(targets)
        let held = Set(current)
        try remove(current.filter { !wanted.contains($0) })
        try add(targets.filter { !held.contains($0) })
        guard current != targets else { return }
        for (index, target) in targets.enumerated() { try position(target, Int64(index + 1) * step) }
        try touch()
    }
}
