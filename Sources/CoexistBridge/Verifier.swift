public import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
public import CoexistStore

/// Compares both schemas object by object: identity, every attribute (as values, after conversion), every
/// relationship (as sets of identities, in order for ordered ones).
public struct Verifier {
    /// The comparison's outcome.
    public struct Report: Sendable, Encodable {
        /// Object counts per side.
        public struct Objects: Sendable, Encodable {
            public var legacy: Int
            public var new: Int
        }

        /// True when no difference was found.
        public var equal: Bool
        /// How many objects each side holds.
        public var objects: Objects
        /// The differences, one line each (at most `limit`).
        public var differences: [String]
        /// The number of differences, including those not listed.
        public var differenceCount: Int
        /// Every object that differs (all of them, not only the listed), as a pair of its two sides'
        /// identities where each is known: what a repair re-applies. Not in the JSON.
        public var differing: [ObjectPair] = []

        enum CodingKeys: String, CodingKey { case equal, objects, differences, differenceCount }
    }

    /// One object in both schemas: its legacy identity, its new-schema reference, or both.
    public struct ObjectPair: Sendable, Hashable {
        public var legacy: ObjectID?
        public var new: ObjectRef?

        /// Creates a pair.
        public init(legacy: ObjectID?, new: ObjectRef?) {
            self.legacy = legacy
            self.new = new
        }
    }

    let engine: SyncEngine
    let limit: Int
    /// Told the number of Core Data objects compared so far and how many there are, every 1,000 (a
    /// progress bar; the total is counted in the comparison's snapshot first).
    public var progress: (_ done: Int, _ total: Int) -> Void = { _, _ in }

    /// A verifier over the bridge's stores, listing at most `limit` differences.
    public init(engine: SyncEngine, limit: Int = 1_000) {
        self.engine = engine
        self.limit = limit
    }

    /// Runs the comparison inside one read transaction (a consistent snapshot).
    public func run() throws -> Report {
        try engine.connection.read {
            var differences: [String] = []
            var count = 0
            var differing: [ObjectPair] = []
            var current = ObjectPair(legacy: nil, new: nil)
            func differ(_ line: String) {
                count += 1
                if differences.count < limit { differences.append(line) }
                let known = current.legacy != nil || current.new != nil
                if known && differing.last != current { differing.append(current) }
            }
            let model = engine.new.model
            var legacyCount = 0
            var newCount = 0
            var seen: Set<ObjectRef> = []
            let roots = model.entities.filter { $0.superentity == nil }
            var total = 0
            for root in roots { total += try engine.legacy.count(ObjectQuery(entity: root.name)) }
            for root in roots {
                try engine.legacy.forEachObject(of: root.name) { object in
                    legacyCount += 1
                    if legacyCount % 1_000 == 0 { progress(legacyCount, total) }
                    current = ObjectPair(legacy: object.id, new: nil)
                    let rootName = root.name
                    let recorded = try engine.identities.recordedID(root: rootName, pk: object.id.pk)
                    guard let id = recorded ?? derivedIdentity(object) else {
                        differ("\(object.id): no identity in the new schema")
                        return
                    }
                    if recorded == nil, let owner = try engine.identities.recordedPK(root: rootName, id: id),
                        owner != object.id.pk
                    {
                        current = ObjectPair(legacy: nil, new: nil)  // a parked twin: the bridge retries it
                        differ("\(object.id): parked: its id \(id) is also that of \(rootName) Z_PK \(owner)")
                        return
                    }
                    guard let stored = try engine.new.entityOfRow(id: id, rootEntity: rootName) else {
                        differ("\(object.id) (\(id)): missing in the new schema")
                        return
                    }
                    let ref = ObjectRef(entity: stored, id: id)
                    seen.insert(ref)
                    current.new = ref
                    guard stored == object.id.entity else {
                        differ("\(object.id) (\(id)): entity \(object.id.entity) is \(stored) in the new schema")
                        return
                    }
                    try compare(object, ref, differ)
                }
                for ref in try engine.new.refs(of: root.name) {
                    newCount += 1
                    current = ObjectPair(legacy: nil, new: ref)
                    if !seen.contains(ref) { differ("\(ref): missing in the legacy schema") }
                }
            }
            return Report(
                equal: count == 0,
                objects: Report.Objects(legacy: legacyCount, new: newCount),
                differences: differences,
                differenceCount: count,
                differing: differing
            )
        }
    }

    private func derivedIdentity(_ object: LegacyObject) -> String? {
        guard case .uuidAttribute(let name)? = engine.new.schema.entities[object.id.entity]?.identity,
            case .uuid(let bytes)? = object.attributes[name]
        else { return nil }
        return UUIDText.text(bytes)
    }

    private func compare(_ object: LegacyObject, _ ref: ObjectRef, _ differ: (String) -> Void) throws {
        let model = engine.new.model
        guard let entity = model.entity(named: object.id.entity), let values = try engine.new.values(of: ref) else {
            return
        }
        for attribute in model.allAttributes(of: entity) where !attribute.isTransient {
            let legacyValue = object.attributes[attribute.name] ?? .null
            let newValue = values[attribute.name] ?? .null
            if legacyValue != newValue && !(Self.isNaN(legacyValue) && Self.isNaN(newValue)) {
                differ("\(ref) \(attribute.name): legacy \(legacyValue), new \(newValue)")
            }
        }
        for relationship in model.allRelationships(of: entity) where !relationship.isTransient {
            let legacyTargets = try engine.legacy.related(object.id, relationship.name).map { target -> String in
                let root = engine.identities.root(of: target.entity)
                return (try engine.identities.recordedID(root: root, pk: target.pk)) ?? "\(target)"
            }
            let newTargets = try engine.new.related(ref, relationship.name).map(\.id)
            let same = relationship.isOrdered ? legacyTargets == newTargets : Set(legacyTargets) == Set(newTargets)
            if !same {
                differ("\(ref) \(relationship.name): legacy \(legacyTargets.sorted()), new \(newTargets.sorted())")
            }
        }
    }

    static func isNaN(_ value: AttributeValue) -> Bool {
        if case .double(let number) = value { return number.isNaN }
        return false
    }
}
