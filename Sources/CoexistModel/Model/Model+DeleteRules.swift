/// Core Data's delete rules as one computation both stores use: which objects a delete takes with it
/// (cascade), and whether a Deny rule forbids it.
extension Model {
    /// A Deny relationship that still holds an object outside the deleted set.
    public struct DenyViolation<ID>: Error where ID: Sendable {
        /// The object being deleted.
        public var object: ID
        /// Its relationship whose delete rule is Deny.
        public var relationship: String
        /// The object the relationship still holds.
        public var holder: ID
    }

    /// The objects deleting `root` deletes, `root` first, following cascade relationships breadth-first;
    /// or the first Deny violation among them.
    ///
    /// - Parameters:
    ///   - alongside: objects the same save deletes too: a Deny relationship holding only those and members
    ///     of the set does not forbid the delete (whichever of them a context deletes first).
    ///   - entity: the entity of an object.
    ///   - related: the objects an object's relationship (by name) holds.
    public func deletionSet<ID: Hashable & Sendable>(
        from root: ID,
        alongside: Set<ID> = [],
        entity: (ID) throws -> Entity,
        related: (ID, String) throws -> [ID]
    ) throws -> Result<(ordered: [ID], members: Set<ID>), DenyViolation<ID>> {
        var ordered = [root]
        var members: Set<ID> = [root]
        var index = 0
        while index < ordered.count {
            let current = ordered[index]
            index += 1
            for relationship in allRelationships(of: try entity(current))
            where !relationship.isTransient && relationship.deleteRule == .cascade {
                for target in try related(current, relationship.name) where members.insert(target).inserted {
                    ordered.append(target)
                }
            }
        }
        for current in ordered {
            for relationship in allRelationships(of: try entity(current))
            where !relationship.isTransient && relationship.deleteRule == .deny {
                if let holder = try related(current, relationship.name).first(where: {
                    !members.contains($0) && !alongside.contains($0)
                }) {
                    return .failure(DenyViolation(object: current, relationship: relationship.name, holder: holder))
                }
            }
        }
        return .success((ordered, members))
    }
}

extension Model.DenyViolation: CustomStringConvertible {
    /// "cannot delete X: its relationship R (delete rule Deny) still holds Y".
    public var description: String {
        "cannot delete \(object): its relationship \(relationship) (delete rule Deny) still holds \(holder)"
    }
}
