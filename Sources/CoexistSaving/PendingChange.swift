public import CoexistHistory

/// What a save has done to one object so far, as its history change will say: inserted, updated (the
/// properties, in the order they changed) or deleted (with the values a format keeps of a deleted object,
/// `Tombstone`).
public struct PendingChange<Tombstone> {
    /// Insert, update or delete.
    public var type: ChangeType
    /// An update's changed properties, first change first.
    public var properties: [String] = []
    /// A delete's kept values.
    public var tombstone: Tombstone?

    /// A change of `type`.
    @inlinable
    public init(type: ChangeType, properties: [String] = [], tombstone: Tombstone? = nil) {
        self.type = type
        self.properties = properties
        self.tombstone = tombstone
    }
}

extension SaveLedger {
    /// Records the insert of `id`.
    @inlinable
    public func recordInsertion<Tombstone>(_ id: ID) where Entry == PendingChange<Tombstone> {
        record(id, PendingChange(type: .insert))
    }

    /// Whether a change to a property of `id` is an update to record: not for an object this save inserted
    /// or deleted (its insert or delete says it all).
    @inlinable
    public func isUpdatable<Tombstone>(_ id: ID) -> Bool where Entry == PendingChange<Tombstone> {
        !deleted.contains(id) && pending[id].map { $0.type == .update } ?? true
    }

    /// Records that `property` of `id` changed (when ``isUpdatable(_:)``).
    @inlinable
    public func recordUpdate<Tombstone>(_ id: ID, _ property: String) where Entry == PendingChange<Tombstone> {
        recordUpdate(id, properties: CollectionOfOne(property))
    }

    /// Records that `properties` of `id` changed, in their order (when ``isUpdatable(_:)``): the object's entry
    /// looked up and recorded once for all of them.
    @inlinable
    public func recordUpdate<Tombstone, Properties: Sequence<String>>(
        _ id: ID,
        properties: Properties
    ) where Entry == PendingChange<Tombstone> {
        guard !deleted.contains(id) else { return }
        let held = pending[id]
        guard held.map({ $0.type == .update }) ?? true else { return }
        var entry = held ?? PendingChange(type: .update)
        var changed = false
        for property in properties where !entry.properties.contains(property) {
            entry.properties.append(property)
            changed = true
        }
        if changed { record(id, entry) }
    }

    /// Records the delete of `id`: an object this save inserted leaves the ledger (nothing of it reaches
    /// the history), another gets a delete change with `tombstone`.
    @inlinable
    public func recordDeletion<Tombstone>(
        _ id: ID,
        tombstone: Tombstone
    ) where Entry == PendingChange<Tombstone> {
        let inserted = pending[id]?.type == .insert
        markDeleted(id)
        if inserted {
            forget(id)
        } else {
            record(id, PendingChange(type: .delete, tombstone: tombstone))
        }
    }
}
