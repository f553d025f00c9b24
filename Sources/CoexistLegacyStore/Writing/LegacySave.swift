import CoexistHistory
public import CoexistModel
import CoexistSQLite
import CoexistSaving

/// One save in progress: inserts, updates, deletes and relationship changes, applied at once inside the
/// save's SQLite write transaction and recorded, at the end, as one persistent-history transaction.
///
/// Obtain it from ``LegacyStore/save(_:timestamp:_:)``; it is valid only inside that closure. Everything
/// the closure does is one SQLite transaction: if the closure or any rule throws, nothing is written.
/// Rules enforced as Core Data enforces them: `Z_PK` from the root entity's `Z_MAX`, `Z_OPT` 1 on insert
/// and +1 once per save for every changed object, optimistic locking (`expectedVersion`), both sides of
/// every relationship, delete rules (cascade, nullify, deny, no action), uniqueness constraints, mandatory
/// attributes and integer ranges.
public final class LegacySave {
    /// What a delete keeps for the history: the tombstone columns' stored values, and the same decoded.
    struct Tombstone {
        var stored: [SQLiteValue]
        var values: [String: AttributeValue]
    }

    /// An object's change so far.
    typealias Pending = PendingChange<Tombstone>

    let store: LegacyStore
    let model: Model
    let schema: StoreSchema
    let keys: KeyAllocator
    /// What the save changed so far, and each operation's atomicity (``atomically(_:)``).
    let ledger = SaveLedger<ObjectID, Pending>()
    /// The objects whose `Z_OPT` this save bumped already, and the versions it read or wrote.
    var bumped: Set<ObjectID> = []
    var versions: [ObjectID: Int64] = [:]
    /// What the running operation changed of the Core Data-only state, to undo it if it fails.
    var journal: Journal?
    /// Whether a non-optional attribute must have a value (true). The bridge turns this off: it copies
    /// what the other side holds, and real Core Data stores do hold NULL in non-optional columns.
    public var enforcesMandatoryValues = true

    init(store: LegacyStore, model: Model, schema: StoreSchema) {
        self.store = store
        self.model = model
        self.schema = schema
        keys = KeyAllocator(connection: store.connection)
    }

    var connection: Connection { store.connection }

    // MARK: Inserting and updating

    /// Inserts an object of the concrete entity `entityName` and returns its identity.
    ///
    /// Attributes not in `values` take the model's default; a non-optional attribute left without a value
    /// fails the save. Relationships are set afterwards with ``setToOne(_:_:_:)`` and ``add(_:to:_:)``.
    @discardableResult
    public func insert(_ entityName: String, _ values: [String: AttributeValue] = [:]) throws -> ObjectID {
        try atomically { try insertNow(entityName, values) }
    }

    /// Inserts an object with the given `Z_PK` (a replay into a copy of the store keeps the objects' keys);
    /// fails when a row of its table already has that key.
    public func insert(_ entityName: String, _ values: [String: AttributeValue], pk: Int64) throws -> ObjectID {
        try atomically { try insertNow(entityName, values, pk: pk) }
    }

    func insertNow(
        _ entityName: String,
        _ values: [String: AttributeValue] = [:],
        pk chosen: Int64? = nil
    ) throws
        -> ObjectID
    {
        guard let entity = model.entity(named: entityName), let mapping = schema.entities[entityName] else {
            throw LegacyStoreError.modelMismatch(path: store.path, detail: "no entity named \(entityName)")
        }
        guard !entity.isAbstract else {
            throw LegacyStoreError.validation(
                path: store.path,
                detail: "entity \(entityName) is abstract: it cannot be inserted"
            )
        }
        let root = model.root(of: entity)
        guard let rootNumber = schema.entities[root.name]?.number else {
            throw LegacyStoreError.modelMismatch(path: store.path, detail: "no Z_PRIMARYKEY row for \(root.name)")
        }
        let pk: Int64
        if let chosen {
            try keys.claim(chosen, entity: rootNumber, table: mapping.table)
            pk = chosen
        } else {
            pk = try keys.allocate(entity: rootNumber, table: mapping.table)
        }
        let id = ObjectID(entity: entityName, pk: pk)
        let attributes = model.allAttributes(of: entity).filter { !$0.isTransient }
        for name in values.keys where !attributes.contains(where: { $0.name == name }) {
            throw LegacyStoreError.validation(
                path: store.path,
                detail: "\(id): entity \(entityName) has no attribute \(name)"
            )
        }
        var columns = ["Z_PK", "Z_ENT", "Z_OPT"]
        var arguments: [SQLiteValue] = [.integer(pk), .integer(Int64(mapping.number)), .integer(1)]
        for attribute in attributes where !attribute.isDerived {
            let value = values[attribute.name] ?? attribute.defaultValue?.value ?? .null
            if case .null = value, !attribute.isOptional, enforcesMandatoryValues {
                throw LegacyStoreError.validation(
                    path: store.path,
                    detail: "\(id): mandatory attribute \(attribute.name) has no value"
                )
            }
            guard case .attribute(let column) = mapping.properties[attribute.name] else {
                if case .null = value { continue }
                throw LegacyStoreError.modelMismatch(
                    path: store.path,
                    detail: "\(id): attribute \(attribute.name) has no column in this store"
                )
            }
            guard !columns.contains(column) else {
                throw LegacyStoreError.modelMismatch(
                    path: store.path,
                    detail: "\(id): attributes share column \(column); the model does not match the store"
                )
            }
            columns.append(column)
            arguments.append(try encode(value, attribute, id))
        }
        let sql =
            "INSERT INTO \(SQLIdentifier.quoted(mapping.table)) (\(columns.map(SQLIdentifier.quoted).joined(separator: ", "))) "
            + "VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))"
        try checkUniqueness(
            id,
            entity: entity,
            mapping: mapping,
            values: Dictionary(uniqueKeysWithValues: zip(columns, arguments))
        )
        try connection.run(sql, arguments)
        ledger.recordInsertion(id)
        setBumped(id, true)
        setVersion(id, 1)
        return id
    }

    /// Sets attributes of an existing object.
    ///
    /// - Parameter expectedVersion: the `Z_OPT` the caller last saw; when it differs from the stored one the
    ///   save fails with ``LegacyStoreError/conflict(path:object:expected:found:)``.
    public func update(_ id: ObjectID, _ values: [String: AttributeValue], expectedVersion: Int64? = nil) throws {
        try atomically { try updateNow(id, values, expectedVersion: expectedVersion) }
    }

    func updateNow(_ id: ObjectID, _ values: [String: AttributeValue], expectedVersion: Int64? = nil) throws {
        let (entity, mapping) = try resolve(id)
        try checkVersion(id, mapping: mapping, expected: expectedVersion)
        guard !values.isEmpty else { return }
        var assignments: [String] = []
        var arguments: [SQLiteValue] = []
        var encoded: [String: SQLiteValue] = [:]
        for (name, value) in values.sorted(by: { $0.key < $1.key }) {
            guard let attribute = model.allAttributes(of: entity).first(where: { $0.name == name && !$0.isTransient }),
                case .attribute(let column) = mapping.properties[name]
            else {
                throw LegacyStoreError.validation(
                    path: store.path,
                    detail: "\(id): entity \(entity.name) has no stored attribute \(name)"
                )
            }
            if case .null = value, !attribute.isOptional, enforcesMandatoryValues {
                throw LegacyStoreError.validation(
                    path: store.path,
                    detail: "\(id): mandatory attribute \(name) cannot be nil"
                )
            }
            if attribute.isDerived {
                throw LegacyStoreError.validation(
                    path: store.path,
                    detail: "\(id): \(name) is derived: Core Data's triggers maintain it"
                )
            }
            let stored = try encode(value, attribute, id)
            assignments.append("\(SQLIdentifier.quoted(column)) = ?")
            arguments.append(stored)
            encoded[column] = stored
        }
        try checkUniqueness(id, entity: entity, mapping: mapping, values: encoded)
        try connection.run(
            "UPDATE \(SQLIdentifier.quoted(mapping.table)) SET \(assignments.joined(separator: ", ")) WHERE Z_PK = ?",
            arguments + [.integer(id.pk)]
        )
        for name in values.keys.sorted() { try touch(id, name) }
    }

    // MARK: Bookkeeping

    func resolve(_ id: ObjectID) throws -> (Entity, EntityMapping) {
        guard let entity = model.entity(named: id.entity), let mapping = schema.entities[id.entity] else {
            throw LegacyStoreError.modelMismatch(path: store.path, detail: "no entity named \(id.entity)")
        }
        return (entity, mapping)
    }

    /// Fails unless the object exists as the entity its identity names, and, when `expected` is given, has
    /// that version.
    func checkVersion(_ id: ObjectID, mapping: EntityMapping, expected: Int64?) throws {
        if deleted.contains(id) {
            throw LegacyStoreError.validation(path: store.path, detail: "\(id) was deleted earlier in this save")
        }
        if let known = versions[id] {
            if let expected, expected != known {
                throw LegacyStoreError.conflict(
                    path: store.path,
                    object: id.description,
                    expected: expected,
                    found: known
                )
            }
            return
        }
        let rows = try connection.rows(
            "SELECT Z_OPT, Z_ENT FROM \(SQLIdentifier.quoted(mapping.table)) WHERE Z_PK = ?",
            [.integer(id.pk)]
        )
        guard let row = rows.first else {
            if let expected {
                throw LegacyStoreError.conflict(
                    path: store.path,
                    object: id.description,
                    expected: expected,
                    found: nil
                )
            }
            throw LegacyStoreError.validation(path: store.path, detail: "\(id) does not exist")
        }
        guard row[1].integerValue == Int64(mapping.number) else {
            throw LegacyStoreError.validation(
                path: store.path,
                detail: "\(id): the row is another entity (Z_ENT \(row[1].integerValue ?? -1))"
            )
        }
        let stored = row[0].integerValue ?? 0
        setVersion(id, stored)
        if let expected, stored != expected {
            throw LegacyStoreError.conflict(path: store.path, object: id.description, expected: expected, found: stored)
        }
    }

    /// Records that `property` of `id` changed, bumping `Z_OPT` the first time the object changes in this save.
    func touch(_ id: ObjectID, _ property: String) throws {
        guard ledger.isUpdatable(id) else { return }
        if !bumped.contains(id) {
            let (_, mapping) = try resolve(id)
            try connection.run(
                "UPDATE \(SQLIdentifier.quoted(mapping.table)) SET Z_OPT = coalesce(Z_OPT, 0) + 1 WHERE Z_PK = ?",
                [.integer(id.pk)]
            )
            setBumped(id, true)
        }
        ledger.recordUpdate(id, property)
    }

    var pending: [ObjectID: Pending] { ledger.pending }
    var deleted: Set<ObjectID> { ledger.deleted }

    /// Whether this save deleted `id`: itself, or through a cascade from another object it deleted.
    public func hasDeleted(_ id: ObjectID) -> Bool { ledger.deleted.contains(id) }

    func encode(_ value: AttributeValue, _ attribute: Attribute, _ id: ObjectID) throws -> SQLiteValue {
        do {
            return try AttributeCodec.encode(value, as: attribute)
        } catch {
            throw LegacyStoreError.validation(path: store.path, detail: "\(id), attribute \(attribute.name): \(error)")
        }
    }
}
