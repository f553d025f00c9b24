package import CoexistModel

/// The one way both formats' saves delete an object: with the model's delete rules (the deleted set and
/// its Deny checks from ``CoexistModel/Model/deletionSet(from:entity:related:)``), or alone when the delete
/// was resolved elsewhere (the bridge mirroring each cascaded delete as its own change).
package enum Deletion {
    /// Deletes `id`: `deleteOne` runs for each object of the deleted set (with the whole set, whose members
    /// need no nullifying), or for `id` alone when not `applyingRules`. A Deny violation (not counting the
    /// objects the save deletes `alongside`) throws `refusal(description)` before anything is deleted.
    package static func run<ID: Hashable & Sendable>(
        _ id: ID,
        model: Model,
        applyingRules: Bool,
        alongside: Set<ID> = [],
        entity: (ID) throws -> Entity,
        related: (ID, String) throws -> [ID],
        refusal: (String) -> any Error,
        deleteOne: (ID, Set<ID>) throws -> Void
    ) throws {
        guard applyingRules else {
            try deleteOne(id, [id])
            return
        }
        switch try model.deletionSet(from: id, alongside: alongside, entity: entity, related: related) {
        case .failure(let violation):
            throw refusal(violation.description)
        case .success(let (doomed, members)):
            for current in doomed { try deleteOne(current, members) }
        }
    }
}
