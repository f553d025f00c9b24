import CoexistHistory
public import CoexistModel
import CoexistSQLite
import CoexistSaving

/// One save to the new schema in progress: inserts, updates, deletes and relationship changes, applied
/// inside the save's SQLite write transaction and recorded at the end as one history transaction (an
/// `ATRANSACTION` row on the shared token sequence plus `coexist_change` rows).
///
/// Obtain it from ``NewStore/save(_:timestamp:_:)``; valid only inside that closure. Each operation is atomic
/// on its own (a savepoint): one that throws leaves the save as it was before it. Rules: identities are
/// lower-case UUIDs; defaults apply on insert; mandatory attributes, integer ranges and uniqueness
/// constraints are enforced; both sides of every relationship are kept; delete rules apply (in the new
/// schema "No Action" behaves as Nullify, so that references stay valid).
public final class NewSave {
    /// An object's change so far; a delete keeps the attributes preserved on deletion.
    typealias Pending = PendingChange<[String: AttributeValue]>

    let store: NewStore
    /// What the save changed so far, and each operation's atomicity (``atomically(_:)``).
    let ledger = SaveLedger<ObjectRef, Pending>()
    /// Whether a non-optional attribute must have a value (true). The bridge turns this off: it copies
    /// what the other side holds, and real Core Data stores do hold NULL in non-optional columns.
    public var enforcesMandatoryValues = true
    /// Whether the save records what its inserts and updates set in the history (`coexist_change.vals`),
    /// making their events exact however late they are read (true). The bridge turns this off for its
    /// copies: reading them back costs about a third of its mirroring rate, and a mirror's event can say
    /// which token its values are from instead.
    public var recordsValues = true
    /// By updated object: what properties held before this save first wrote them (``noteBefore(_:_:)``).
    var before: [ObjectRef: [String: AttributeValue]] = [:]
    /// Rows read for ``before``, once each (nil inside: the row does not decode).
    var storedRows: [ObjectRef: StoredRow?] = [:]

    init(store: NewStore) { self.store = store }

    var connection: Connection { store.connection }
    var pending: [ObjectRef: Pending] { ledger.pending }
    var deleted: Set<ObjectRef> { ledger.deleted }
    var model: Model { store.model }

    /// Whether this save deleted `ref`: itself, or through a cascade from another object it deleted.
    public func hasDeleted(_ ref: ObjectRef) -> Bool { ledger.deleted.contains(ref) }
    var schema: NewSchema { store.schema }

    // MARK: Inserting and updating

    /// Inserts an object of the concrete entity `entityName` and returns its reference.
    ///
    /// The identity is `id` when given, else the identity attribute's value in `values`, else a new UUID
    /// (also written to the identity attribute when the entity has one).
    @discardableResult
    public func insert(
        _ entityName: String,
        id: String? = nil,
        _ values: [String: AttributeValue] = [:]
    ) throws -> ObjectRef {
        try atomically { try insertNow(entityName, id: id, values) }
    }

    func insertNow(_ entityName: String, id: String?, _ values: [String: AttributeValue]) throws -> ObjectRef {
        guard let entity = model.entity(named: entityName), let mapping = schema.entities[entityName] else {
            throw StoreError.mismatch(path: store.path, detail: "no entity named \(entityName)")
        }
        guard !entity.isAbstract else {
            throw StoreError.validation(
                path: store.path,
                detail: "entity \(entityName) is abstract: it cannot be inserted"
            )
        }
        var values = values
        let identity = try resolveIdentity(mapping: mapping, given: id, values: &values, entity: entityName)
        let ref = ObjectRef(entity: entityName, id: identity)
        let attributes = model.allAttributes(of: entity).filter { !$0.isTransient }
        for name in values.keys where !attributes.contains(where: { $0.name == name }) {
            throw StoreError.validation(
                path: store.path,
                detail: "\(ref): entity \(entityName) has no attribute \(name)"
            )
        }
        var columns = ["id"]
        var arguments: [SQLiteValue] = [.text(identity)]
        if mapping.hasKindColumn {
            columns.append("kind")
            arguments.append(.text(entityName))
        }
        for attribute in attributes {
            let value = values[attribute.name] ?? attribute.defaultValue?.value ?? .null
            if case .null = value, !attribute.isOptional, enforcesMandatoryValues {
                throw StoreError.validation(
                    path: store.path,
                    detail: "\(ref): mandatory attribute \(attribute.name) has no value"
                )
            }
            guard case .column(let column, _) = mapping.properties[attribute.name] else { continue }
            columns.append(column)
            arguments.append(try encode(value, attribute, ref))
        }
        let sql =
            store.insertStatements[entityName]
            ?? "INSERT INTO \(SQLIdentifier.quoted(mapping.table)) (\(columns.map(SQLIdentifier.quoted).joined(separator: ", "))) "
            + "VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))"
        store.insertStatements[entityName] = sql
        try run(ref, sql, arguments)
        ledger.recordInsertion(ref)
        return ref
    }

    /// Records, for the save's history, objects the caller inserted with its own statement on the save's
    /// connection, inside the save (a set-based copy): each gets an insert change, as if inserted through
    /// ``insert(_:id:_:)``.
    public func noteInserted(_ refs: [ObjectRef]) throws {
        try atomically {
            for ref in refs where pending[ref] == nil && !deleted.contains(ref) {
                ledger.recordInsertion(ref)
            }
        }
    }

    /// Records, for the save's history, attributes of existing objects the caller updated with its own
    /// statement on the save's connection, inside the save (a set-based copy): each object gets an update
    /// change naming them, as if updated through ``update(_:_:)``.
    public func noteUpdated(_ updates: [(ref: ObjectRef, properties: [String])]) throws {
        try atomically {
            for (ref, properties) in updates { ledger.recordUpdate(ref, properties: properties.sorted()) }
        }
    }

    /// Sets attributes of an existing object (the identity attribute cannot change).
    public func update(_ ref: ObjectRef, _ values: [String: AttributeValue]) throws {
        try atomically { try updateNow(ref, values) }
    }

    func updateNow(_ ref: ObjectRef, _ values: [String: AttributeValue]) throws {
        let (entity, mapping) = try resolve(ref)
        try checkExists(ref)
        guard !values.isEmpty else { return }
        var assignments: [String] = []
        var arguments: [SQLiteValue] = []
        for (name, value) in values.sorted(by: { $0.key < $1.key }) {
            guard let attribute = model.allAttributes(of: entity).first(where: { $0.name == name && !$0.isTransient })
            else {
                throw StoreError.validation(
                    path: store.path,
                    detail: "\(ref): entity \(entity.name) has no attribute \(name)"
                )
            }
            if case .null = value, !attribute.isOptional, enforcesMandatoryValues {
                throw StoreError.validation(
                    path: store.path,
                    detail: "\(ref): mandatory attribute \(name) cannot be nil"
                )
            }
            switch mapping.properties[name] {
            case .column(let column, _):
                assignments.append("\(SQLIdentifier.quoted(column)) = ?")
                arguments.append(try encode(value, attribute, ref))
            case .identity:
                guard try encode(value, attribute, ref) == .text(ref.id) else {
                    throw StoreError.validation(
                        path: store.path,
                        detail: "\(ref): \(name) is the identity and cannot change"
                    )
                }
            default:
                throw StoreError.validation(path: store.path, detail: "\(ref): \(name) is not stored")
            }
        }
        if !assignments.isEmpty {
            try noteBefore(ref, values.keys.sorted())
            try run(
                ref,
                "UPDATE \(SQLIdentifier.quoted(mapping.table)) SET \(assignments.joined(separator: ", ")) WHERE \"id\" = ?",
                arguments + [.text(ref.id)]
            )
        }
        for name in values.keys.sorted() { touch(ref, name) }
    }

    // MARK: Bookkeeping

    func resolve(_ ref: ObjectRef) throws -> (Entity, NewSchema.EntityMapping) {
        guard let entity = model.entity(named: ref.entity), let mapping = schema.entities[ref.entity] else {
            throw StoreError.mismatch(path: store.path, detail: "no entity named \(ref.entity)")
        }
        return (entity, mapping)
    }

    /// Fails unless `ref` exists as the entity it names and was not deleted in this save.
    func checkExists(_ ref: ObjectRef) throws {
        if deleted.contains(ref) {
            throw StoreError.validation(path: store.path, detail: "\(ref) was deleted earlier in this save")
        }
        if pending[ref]?.type == .insert { return }
        let (entity, _) = try resolve(ref)
        let root = model.root(of: entity).name
        guard let stored = try store.entityOfRow(id: ref.id, rootEntity: root) else {
            throw StoreError.validation(path: store.path, detail: "\(ref) does not exist")
        }
        guard stored == ref.entity else {
            throw StoreError.validation(path: store.path, detail: "\(ref): the row is a \(stored)")
        }
    }

    /// Records that `property` of `ref` changed.
    func touch(_ ref: ObjectRef, _ property: String) { ledger.recordUpdate(ref, property) }

    func encode(_ value: AttributeValue, _ attribute: Attribute, _ ref: ObjectRef) throws -> SQLiteValue {
        do {
            return try NewValueCodec.encode(value, as: attribute)
        } catch {
            throw StoreError.validation(
                path: store.path,
                detail: "\(ref), attribute \(attribute.name): \(error.reason)"
            )
        }
    }

    /// Runs a statement, turning constraint violations (uniqueness, CHECK) into validation errors naming `ref`.
    func run(_ ref: ObjectRef, _ sql: String, _ arguments: [SQLiteValue]) throws {
        do {
            try connection.run(sql, arguments)
        } catch {
            guard error.isConstraintViolation else { throw StoreError.sqlite(error) }
            throw StoreError.validation(path: store.path, detail: "\(ref): \(error.message)")
        }
    }

    private func resolveIdentity(
        mapping: NewSchema.EntityMapping,
        given: String?,
        values: inout [String: AttributeValue],
        entity: String
    ) throws -> String {
        switch mapping.identity {
        case .uuidAttribute(let name):
            if case .uuid(let bytes)? = values[name], let text = UUIDText.text(bytes) {
                if let given, try checkedIdentity(given, entity) != text {
                    throw StoreError.validation(
                        path: store.path,
                        detail: "\(entity): id \(given) differs from \(name) \(text)"
                    )
                }
                return text
            }
            let identity = try given.map { try checkedIdentity($0, entity) } ?? Self.newIdentity()
            values[name] = .uuid(UUIDText.bytes(identity) ?? [])
            return identity
        case .textAttribute(let name):
            if case .string(let text)? = values[name] { return try checkedIdentity(text, entity) }
            let identity = try given.map { try checkedIdentity($0, entity) } ?? Self.newIdentity()
            values[name] = .string(identity)
            return identity
        case .generated:
            return try given.map { try checkedIdentity($0, entity) } ?? Self.newIdentity()
        }
    }

    private func checkedIdentity(_ text: String, _ entity: String) throws -> String {
        let lower = text.lowercased()
        guard UUIDText.bytes(lower) != nil else {
            throw StoreError.validation(path: store.path, detail: "\(entity): identity \"\(text)\" is not a UUID")
        }
        return lower
    }

    /// A random (version 4) UUID, lower-case.
    static func newIdentity() -> String { UUIDText.random() }
}
