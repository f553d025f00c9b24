import CoexistModel
import CoexistStore

/// Making records for stored rows and loading what they reach. A record holds its related records itself
/// (in plain Swift properties, or in relations kept in its backing data), so everything a loaded record
/// reaches is loaded with it: a level of the graph at a time, with one query per relationship and one per
/// table for the targets not held yet (in chunks), never a query per record, and without recursion however
/// long the paths.
extension ModelContext {
    /// A record made for a stored row whose relationships are not loaded yet.
    struct Unloaded {
        let registration: Registration
        /// The row's layout and to-one targets: those its relationships' targets the row named already
        /// (nil when the row named none: every target is read with a query).
        let row: (layout: RecordLayout, toOnes: [[ObjectRef]])?
        /// Its attributes as it holds them, by slot: its snapshot's.
        let attributes: [AttributeValue]
        /// Whether its row named the targets of every relationship, and none (most records a fetch makes):
        /// there is nothing to read or make for it.
        let namesNoTarget: Bool

        init(
            registration: Registration,
            row: (layout: RecordLayout, toOnes: [[ObjectRef]])?,
            attributes: [AttributeValue]
        ) {
            self.registration = registration
            self.row = row
            self.attributes = attributes
            namesNoTarget = row.map { $0.layout.namesNoTarget($0.toOnes) } ?? false
        }

        /// The targets of relationship `slot` its row named (nil: read with a query).
        func known(_ slot: Int) -> [ObjectRef]? {
            guard let row, let position = row.layout.toOneSources[slot] else { return nil }
            return row.toOnes[position]
        }

        /// The relationship slots whose targets are read with a query.
        var queriedSlots: [Int] {
            row?.layout.queriedSlots ?? Array(registration.schema.relationships.indices)
        }
    }

    /// The targets of the relationships of one level of records: those their rows named, and the others as
    /// queries read them.
    struct Targets {
        /// By relationship name and owner.
        var read: [String: [ObjectRef: [ObjectRef]]] = [:]

        /// The targets of relationship `slot` of `unloaded`.
        func of(_ unloaded: Unloaded, _ slot: Int) -> [ObjectRef] {
            if let known = unloaded.known(slot) { return known }
            let name = unloaded.registration.schema.relationships[slot].name
            return read[name]?[unloaded.registration.ref] ?? []
        }
    }

    /// The record object for `ref`: the registered one, or a new one loaded from the database with what it
    /// reaches (nil when the row does not exist).
    func materialize(_ ref: ObjectRef, as type: (any PersistentModel.Type)?) throws -> AnyObject? {
        if let registration = byRef[ref] { return registration.object }
        guard let schema = type?.erasedSchema else { return nil }
        var layouts = RecordLayouts(schema: schema)
        var rows: [StoredRow] = []
        try store.forEachRow(of: [ref]) { found, row in rows.append(try layouts.read(row, found, store)) }
        // The row's reference, not `ref`: a super-entity's reference reads its concrete entity's row.
        return try materialize(rows).first?.object
    }

    /// Makes a record for each of `rows` (rows a query read, of distinct references) not registered yet, then
    /// loads everything they reach: the registration of each row, in their order (a held one for a row whose
    /// reference the context holds: a lookup by a super-entity's reference reads the row of its concrete
    /// one). On error, no record made here stays registered.
    @discardableResult
    func materialize(_ rows: [StoredRow]) throws -> [Registration] {
        var result: [Registration] = []
        result.reserveCapacity(rows.count)
        try materializing { batch in
            for row in rows { result.append(try byRef[row.ref] ?? make(row, in: &batch)) }
        }
        return result
    }

    /// The records one batch made, as it makes them: registered and loaded together once all are made.
    struct Materializing {
        /// Every record made, in order.
        fileprivate var made: [Registration] = []
        /// Those whose rows named targets, or whose relationships are read with queries.
        fileprivate var unloaded: [Unloaded] = []
    }

    /// Runs `body`, which makes records with ``make(_:in:)``, then registers them and loads everything they
    /// reach. On error, no record made here stays registered. `body` may run app code (a record type's
    /// `init(backingData:)`, a relationship's `didSet`): the records it made are not registered yet.
    func materializing(_ body: (inout Materializing) throws -> Void) throws {
        var batch = Materializing()
        try body(&batch)
        // Grown once for the whole batch, not by doubling as it registers (the dictionaries only: an array
        // reserves exactly what it is asked for, so a reserve per small batch would copy it each time).
        registrations.reserveCapacity(registrations.count + batch.made.count)
        byRef.reserveCapacity(byRef.count + batch.made.count)
        for registration in batch.made { register(made: registration) }
        do {
            try load(batch.unloaded, new: true)
        } catch {
            // `load` unregistered those it was given and those it made; the others of the batch are left.
            unregister(batch.made.filter { registrations[ObjectIdentifier($0.object)] != nil })
            throw error
        }
    }

    /// A new record for `row` (of a reference neither registered nor made by the batch before), complete
    /// when its row named no target and it has no relationship read with a query (most records a fetch
    /// makes): otherwise left for ``materializing(_:_:)`` to load.
    func make(_ row: StoredRow, in batch: inout Materializing) throws -> Registration {
        assert(byRef[row.ref] == nil, "\(row.ref) is held already")
        let (registration, attributes, backing) = try record(for: row)
        batch.made.append(registration)
        // Decided from the row, without making the record's ``Unloaded`` (then destroying it) when there is
        // nothing to load.
        if row.layout.namesNoTarget(row.toOnes) {
            settleWithoutTargets(registration, attributes, backing)
        } else {
            batch.unloaded.append(
                Unloaded(registration: registration, row: (row.layout, row.toOnes), attributes: attributes)
            )
        }
        return registration
    }

    /// Registers a record made for a stored row.
    private func register(made registration: Registration) {
        registrations[ObjectIdentifier(registration.object)] = registration
        byRef[registration.ref] = registration
        insertionOrder.append(ObjectIdentifier(registration.object))
    }

    /// Sets no target in every relationship of a record whose row named none (`backing`: its backing data,
    /// nil when its type has none), and takes its snapshot.
    private func settleWithoutTargets(
        _ registration: Registration,
        _ attributes: [AttributeValue],
        _ backing: BackingData?
    ) {
        // A record made for a row most often holds no target already: a key-path write is twice a read,
        // and an app's `didSet` need not see a relationship set to what it is. A relation's targets are in
        // the backing data, none unless the record's initializer set one: no key-path read (a sixth of a
        // fetch, measured), and nothing at all to look at when every relationship is a relation.
        let schema = registration.schema
        defer { registration.snapshot = Snapshot(attributes: attributes, relationships: schema.noTargets) }
        if let backing, schema.everyRelationshipIsRelation, backing.relations.isEmpty { return }
        // By index: iterating copied each slot, retaining its name and closures (10 retains a record).
        let relationships = schema.relationships
        for index in relationships.indices {
            if let backing, schema.isRelation[index] {
                if !backing.targets(index).isEmpty { backing.setTargets([], index) }
            } else if !relationships[index].read(registration.object).isEmpty {
                relationships[index].write(registration.object, [])
            }
        }
    }

    /// Reads the relationships of registered records again (after a save or a merge), loading the targets
    /// not held yet, and takes each record's current attributes as its snapshot.
    func reload(_ held: [Registration]) throws {
        try load(
            held.map { Unloaded(registration: $0, row: nil, attributes: $0.schema.readAttributes($0.object)) },
            new: false
        )
    }

    /// A new record for the stored row of `ref`, not registered yet, its attributes set (partial when the
    /// layout reads some of them only), its relationships not loaded yet.
    private func make(_ row: StoredRow) throws -> Unloaded {
        let (registration, attributes, _) = try record(for: row)
        return Unloaded(registration: registration, row: (row.layout, row.toOnes), attributes: attributes)
    }

    /// A new record for `row`, not registered yet, its attributes set (partial when the layout reads some of
    /// them only), its relationships not loaded yet: its registration, its attributes as it holds them, and
    /// its backing data (nil when its type has none).
    private func record(for row: StoredRow) throws -> (Registration, [AttributeValue], BackingData?) {
        let schema = row.layout.schema
        let object = schema.make()
        let backing = schema.backing?(object)
        var held: [AttributeValue]
        var unfetched: [Int] = []
        // Most often every attribute is a field, the row holds them by slot, and the properties keep each as
        // it is: the row's values are the record's.
        if backing != nil, schema.everyAttributeIsField, row.layout.bySlot,
            row.attributes.count == schema.attributes.count,
            schema.attributes.indices.allSatisfy({ schema.attributes[$0].conversion.keeps(row.attributes[$0]) })
        {
            held = row.attributes
        } else {
            held = try attributes(of: row, for: object, fields: backing != nil, unfetched: &unfetched)
        }
        backing?.fill(&held, unfetched: unfetched, of: object, schema)
        let registration = Registration(object: object, ref: row.ref, schema: schema)
        registration.unfetched = unfetched
        return (registration, held, backing)
    }

    /// The attributes `object` (just made) holds for `row`, by slot, converted as its properties give them
    /// back: a field's value is returned only (the caller fills the backing data with them at once), a plain
    /// property's is set through its key path; the slots the layout skips are appended to `unfetched`.
    private func attributes(
        of row: StoredRow,
        for object: AnyObject,
        fields: Bool,
        unfetched: inout [Int]
    ) throws -> [AttributeValue] {
        let attributes = row.layout.schema.attributes
        let isField = row.layout.schema.isField
        var held: [AttributeValue] = []
        held.reserveCapacity(attributes.count)
        for slot in attributes.indices {
            let field = fields && isField[slot]
            let value: AttributeValue
            switch row.layout.attributeSources[slot] {
            case .position(let position): value = row.attributes[position]
            case .absent: value = .null
            case .skipped:
                unfetched.append(slot)
                held.append(field ? .null : attributes[slot].read(object))
                continue
            }
            let kept =
                field
                ? attributes[slot].conversion.apply(value, attributes[slot].convert)
                : attributes[slot].write(object, value)
            guard let kept else {
                throw StoreError.invalidData(
                    path: store.path,
                    detail: "\(row.ref): the stored \(attributes[slot].name) does not fit the record type's property"
                )
            }
            held.append(kept)
        }
        return held
    }

    /// Loads the relationships of `level`, makes the targets not held yet and loads theirs in turn, a level
    /// at a time; each record's snapshot is taken when its relationships are set. On error, every record
    /// made by this load (those of the first level when the caller just made them: `new`) leaves the
    /// context, and the records it held before get back the relationships and snapshots they had: none
    /// points at a record the context no longer holds (a later save would insert it again).
    private func load(_ first: [Unloaded], new: Bool) throws {
        var level = first
        var made = new ? first.map { $0.registration } : []
        var previous: [(Registration, [[AnyObject]], Snapshot?)] = []
        var isFirstLevel = true
        do {
            while !level.isEmpty {
                let targets = try relationshipTargets(of: level)
                var next: [Unloaded] = []
                for (type, refs) in unheldTargets(level, targets) {
                    var layouts = RecordLayouts(schema: type.erasedSchema)
                    var rows: [StoredRow] = []
                    try store.forEachRow(of: refs) { ref, row in rows.append(try layouts.read(row, ref, store)) }
                    for row in rows where byRef[row.ref] == nil {
                        let unloaded = try make(row)
                        register(made: unloaded.registration)
                        made.append(unloaded.registration)
                        next.append(unloaded)
                    }
                }
                // Every target that exists is held now: set the relationships and take the snapshots.
                for unloaded in level {
                    let registration = unloaded.registration
                    // Only the first level holds records the context had before this load.
                    if isFirstLevel, !new {
                        let objects = registration.schema.relationships.map { $0.read(registration.object) }
                        previous.append((registration, objects, registration.snapshot))
                    }
                    if unloaded.namesNoTarget {
                        let backing = registration.schema.backing?(registration.object)
                        settleWithoutTargets(registration, unloaded.attributes, backing)
                        continue
                    }
                    // Shared by the records that have no target: copied only for one that has.
                    var relationships = registration.schema.noTargets
                    for (slot, relationship) in registration.schema.relationships.enumerated() {
                        var refs: [ObjectRef] = []
                        var objects: [AnyObject] = []
                        for ref in targets.of(unloaded, slot) {
                            guard let held = byRef[ref] else { continue }
                            refs.append(ref)
                            objects.append(held.object)
                        }
                        if !refs.isEmpty { relationships[slot] = refs }
                        relationship.write(registration.object, objects)
                    }
                    registration.snapshot = Snapshot(attributes: unloaded.attributes, relationships: relationships)
                }
                level = next
                isFirstLevel = false
            }
        } catch {
            unregister(made)
            for (registration, objects, snapshot) in previous {
                for (slot, relationship) in registration.schema.relationships.enumerated() {
                    relationship.write(registration.object, objects[slot])
                }
                registration.snapshot = snapshot
            }
            throw error
        }
    }

    /// The targets of every relationship of the records of `level`: those their rows named, the others read
    /// with one query per relationship.
    private func relationshipTargets(of level: [Unloaded]) throws -> Targets {
        var owners: [String: [ObjectRef]] = [:]
        for unloaded in level where !unloaded.namesNoTarget {
            for slot in unloaded.queriedSlots {
                owners[unloaded.registration.schema.relationships[slot].name, default: []]
                    .append(unloaded.registration.ref)
            }
        }
        var targets = Targets()
        for (name, refs) in owners.sorted(by: { $0.key < $1.key }) {
            targets.read[name] = try store.related(refs, name)
        }
        return targets
    }

    /// The targets not registered yet, once each, by the record type the relationship holds.
    private func unheldTargets(
        _ level: [Unloaded],
        _ targets: Targets
    ) -> [(type: any PersistentModel.Type, refs: [ObjectRef])] {
        var groups: [ObjectIdentifier: (type: any PersistentModel.Type, refs: [ObjectRef])] = [:]
        var order: [ObjectIdentifier] = []
        var seen: Set<ObjectRef> = []
        func add(_ refs: [ObjectRef], _ slot: Int, of unloaded: Unloaded) {
            guard !refs.isEmpty, let type = unloaded.registration.schema.relationships[slot].destination else {
                return
            }
            for ref in refs where byRef[ref] == nil && seen.insert(ref).inserted {
                let key = ObjectIdentifier(type)
                if groups[key] == nil {
                    groups[key] = (type, [])
                    order.append(key)
                }
                groups[key]?.refs.append(ref)
            }
        }
        // Most often the row named every target, and none: nothing to look at.
        for unloaded in level where !unloaded.namesNoTarget {
            // In slot order: the targets the row named, or those a query read.
            for slot in unloaded.registration.schema.relationships.indices {
                if let row = unloaded.row, let position = row.layout.toOneSources[slot] {
                    if !row.toOnes[position].isEmpty { add(row.toOnes[position], slot, of: unloaded) }
                } else {
                    add(targets.of(unloaded, slot), slot, of: unloaded)
                }
            }
        }
        return order.compactMap { groups[$0] }
    }
}
