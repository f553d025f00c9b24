import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistStore

/// Events' values: what the history recorded, what the tables hold now, and what is known of before.
extension EventSource {
    /// The properties of `entity` that may change without a change to the object naming them, whose values
    /// are therefore never remembered: attributes triggers maintain, and relationships without an inverse
    /// (a deleted target leaves them by a cascade or `SET NULL` no change records).
    func unstable(_ entity: String?) -> Set<String> {
        guard let entity else { return [] }
        if let known = unstableNames[entity] { return known }
        var names = Set(engine.maintainedAttributes(of: entity))
        if let described = engine.new.model.entity(named: entity) {
            for relationship in engine.new.model.allRelationships(of: described)
            where engine.new.model.inverse(of: relationship) == nil {
                names.insert(relationship.name)
            }
        }
        unstableNames[entity] = names
        return names
    }

    /// What an event knows exactly of its object's values before it: for a new-schema update, what the save
    /// recorded; for a delete, its tombstone and what the deleting save changed first; and, for any update or
    /// delete, what ``memory`` still holds of the object (the previous change coexistd published with its
    /// exact values), for the properties the event names (all it holds, for a delete).
    func before(
        _ change: HistoryChange,
        values: [String: EventValue],
        recorded: RecordedValues?
    ) -> [String: EventValue] {
        var before = recordedBefore(change, recorded: recorded)
        let remembered: [String: EventValue]
        switch change.type {
        case .insert: return before
        case .update: remembered = memory.before(ChangedObject(change), values.keys)
        case .delete: remembered = memory.values(of: ChangedObject(change))
        }
        for (name, value) in remembered where before[name] == nil { before[name] = value }
        return before
    }

    /// What the history itself says of an object before the change: a new-schema save's recorded `before`,
    /// and a delete's tombstone.
    func recordedBefore(_ change: HistoryChange, recorded: RecordedValues?) -> [String: EventValue] {
        var before = (recorded?.before ?? [:]).mapValues { EventValue.attribute($0) }
        if change.type == .delete {
            for (name, value) in change.tombstone where before[name] == nil { before[name] = .attribute(value) }
        }
        return before
    }

    /// What a new-side change recorded in the history, as event values: its own, whenever it is read.
    func eventValues(_ recorded: RecordedValues, _ change: HistoryChange) -> [String: EventValue] {
        var values = recorded.values.mapValues { EventValue.attribute($0) }
        let ordered = Set(
            (change.entity.flatMap(engine.new.model.entity(named:)).map(engine.new.model.allRelationships(of:)) ?? [])
                .filter(\.isOrdered).map(\.name)
        )
        for (name, members) in recorded.members {
            values[name] = .members(members, ordered: ordered.contains(name))
        }
        for (name, count) in recorded.counts { values[name] = .memberCount(count) }
        return values
    }

    /// The object's values now: all attributes, to-ones and to-manys for inserts, the changed ones for
    /// updates, the tombstone for deletes. A to-one's value is its target's identity (the UUID both schemas
    /// share; null when unset or not known yet); a to-many's, its members' identities (in order when
    /// ordered, else sorted), or their count beyond ``RecordedValues/maxListedMembers``. A Core Data update's bitmap may
    /// name the wrong to-many of an entity that has several (their bit order is not derivable from the
    /// model), so when it names any, every to-many of the object is sent.
    ///
    /// Also the relationships whose value may change with no change naming the object: those naming a legacy
    /// target whose identity the bridge has not recorded yet (read from the target's identity attribute,
    /// which the app may still change, or null when it has none yet).
    func currentValues(
        _ change: HistoryChange,
        id: String?
    ) throws -> (values: [String: EventValue], uncertain: Set<String>) {
        if change.type == .delete { return (change.tombstone.mapValues { .attribute($0) }, []) }
        guard let entity = change.entity, let described = engine.new.model.entity(named: entity) else {
            return ([:], [])
        }
        let relationships = engine.new.model.allRelationships(of: described).filter { !$0.isTransient }
        let toOnes = relationships.filter { !$0.isToMany }
        var toManys = relationships.filter(\.isToMany)
        let changed = change.type == .update ? change.properties.map(Set.init) : nil
        if let changed {
            toManys =
                change.side == .legacy
                ? (toManys.contains { changed.contains($0.name) } ? toManys : [])
                : toManys.filter { changed.contains($0.name) }
        }
        var values: [String: EventValue] = [:]
        var uncertain: Set<String> = []
        if change.side == .legacy, let pk = change.objectPK {
            let objectID = ObjectID(entity: entity, pk: pk)
            guard let object = try engine.legacy.object(objectID) else { return ([:], []) }
            values = object.attributes.mapValues { .attribute($0) }
            for relationship in toOnes {
                let reference = object.toOne[relationship.name]
                let target = try reference.flatMap { try engine.identityRecord(ofLegacy: $0.entity, pk: $0.pk) }
                if reference != nil, target?.isRecorded != true { uncertain.insert(relationship.name) }
                values[relationship.name] = .attribute(target.map { .string($0.id) } ?? .null)
            }
            if let changed { values = values.filter { changed.contains($0.key) } }
            for relationship in toManys {
                // Counted first: the members of a to-many too large to list are never read.
                let count = try engine.legacy.relatedCount(objectID, relationship.name)
                guard count <= RecordedValues.maxListedMembers else {
                    values[relationship.name] = .memberCount(count)
                    continue
                }
                let members = try engine.legacy.related(objectID, relationship.name).map {
                    try engine.identityRecord(ofLegacy: $0.entity, pk: $0.pk)
                }
                if members.contains(where: { $0?.isRecorded != true }) { uncertain.insert(relationship.name) }
                values[relationship.name] = .members(members.map { $0?.id }, ordered: relationship.isOrdered)
            }
        } else if let id {
            let ref = ObjectRef(entity: entity, id: id)
            guard let stored = try engine.new.values(of: ref) else { return ([:], []) }
            values = stored.mapValues { .attribute($0) }
            for relationship in toOnes {
                values[relationship.name] = .attribute(
                    try engine.new.related(ref, relationship.name).first.map { .string($0.id) } ?? .null
                )
            }
            if let changed { values = values.filter { changed.contains($0.key) } }
            for relationship in toManys {
                // Counted first: the members of a to-many too large to list are never read.
                let count = try engine.new.relatedCounts([ref], relationship.name)[ref] ?? 0
                values[relationship.name] =
                    count > RecordedValues.maxListedMembers
                    ? .memberCount(count)
                    : .members(
                        try engine.new.related(ref, relationship.name).map(\.id),
                        ordered: relationship.isOrdered
                    )
            }
        }
        return (values, uncertain)
    }
}
