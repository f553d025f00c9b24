public import CoexistHistory
import CoexistModel
public import CoexistStore
import FoundationEssentials

/// A context on the new store in the spirit of SwiftData's `ModelContext`: insert, delete, change records'
/// properties, then `save()` as one SQLite transaction recorded in the shared history with the context's
/// author; fetch with predicates, run-time filters and sort descriptors.
///
/// The context keeps one record object per stored object (an identity map) and a snapshot of what was last
/// saved or fetched; `save()` writes the differences. Records reachable from a registered record through
/// relationships are inserted with it. After a save, every registered record's relationships are reloaded,
/// so both sides of a relationship agree (`category.tasks` contains a task whose `category` was set).
/// Fetches read what is saved in the database. A context is not `Sendable`: confine it to one task.
public final class ModelContext {
    final class Registration {
        let object: AnyObject
        var ref: ObjectRef
        let schema: ErasedSchema
        // Unchecked for exclusive access (a fetch sets these for every record): no access to one starts while
        // another to the same property is under way on the same thread.
        @exclusivity(unchecked) var snapshot: Snapshot?
        @exclusivity(unchecked) var deleted = false
        /// Attribute slots a fetch with `propertiesToFetch` left unread: they hold what the record was made
        /// with until a fetch reads them.
        @exclusivity(unchecked) var unfetched: [Int] = []

        init(object: AnyObject, ref: ObjectRef, schema: ErasedSchema) {
            self.object = object
            self.ref = ref
            self.schema = schema
        }
    }

    /// A record's state, by its schema's slots.
    struct Snapshot {
        var attributes: [AttributeValue]
        var relationships: [[ObjectRef]]
    }

    /// The store.
    public let store: NewStore
    /// Recorded with every save: author, context name, process.
    public var metadata: SaveMetadata
    // The identity map is unchecked for exclusive access (a fetch registers every record it makes here): no
    // access to one of these starts while another to the same map is under way on the same thread (each
    // change is one subscript or collection operation whose closure, if any, does not touch the map). The
    // check never covered other threads: a context is not `Sendable`, and one that autosaves is used on the
    // main actor, where autosave runs.
    @exclusivity(unchecked) var registrations: [ObjectIdentifier: Registration] = [:]
    @exclusivity(unchecked) var byRef = RegistrationIndex()
    @exclusivity(unchecked) var insertionOrder: [ObjectIdentifier] = []
    /// References registered by more than one record (a new record given the identity of one held): the
    /// entry of ``byRef`` stays with the first until it leaves.
    var shadowedRefs: Set<ObjectRef> = []
    /// The last history token merged (``mergeChangesFromStore()``); the file's last token at creation.
    public internal(set) var lastMergedToken: Int64 = 0
    /// Tokens of this context's own saves not merged yet: merging skips them.
    var ownTokens: Set<Int64> = []
    /// Autosave's settings and its loop (``autosaveEnabled``).
    var autosave = Autosave()

    /// A context on `store` whose saves are recorded with `author`.
    public convenience init(_ store: NewStore, author: String? = nil, contextName: String? = nil) throws {
        try StringFunctions.register(on: store.connection)
        self.init(unchecked: store, author: author, contextName: contextName)
    }

    /// A context on a store whose connection already has the string functions (a container's).
    init(unchecked store: NewStore, author: String?, contextName: String? = nil) {
        self.store = store
        metadata = SaveMetadata(author: author, contextName: contextName, processName: "coexist")
        if (try? HistoryTables.exist(store.connection)) == true {
            lastMergedToken = (try? HistoryGaps.lastIssuedToken(store.connection)) ?? 0
        }
    }

    deinit { autosave.loop?.cancel() }

    /// The container the context was made from, if any.
    public internal(set) weak var container: ModelContainer?

    /// Whether anything was inserted, deleted or changed since the last save. New records reachable from
    /// held ones through their relationships are registered first (they are changes: the next save inserts
    /// them).
    public var hasChanges: Bool {
        registerReachableRecords()
        return registrations.values.contains { registration in
            registration.snapshot == nil || registration.deleted
                || currentSnapshot(registration).attributes != registration.snapshot?.attributes
                || currentRelationships(registration) != registration.snapshot?.relationships
        }
    }

    /// Starts tracking a new record; it is written by the next ``save()``.
    public func insert<Model: PersistentModel>(_ record: Model) {
        _ = register(new: record)
    }

    /// Marks a record for deletion by the next ``save()`` (with the model's delete rules).
    public func delete<Model: PersistentModel>(_ record: Model) {
        guard let registration = registrations[ObjectIdentifier(record)] else { return }
        if registration.snapshot == nil {
            unregister(registration)
        } else {
            registration.deleted = true
        }
    }

    @discardableResult
    func register(new object: AnyObject) -> Registration? {
        if let existing = registrations[ObjectIdentifier(object)] { return existing }
        guard let schema = erasedSchema(of: object), let mapping = store.schema.entities[schema.entity] else {
            return nil
        }
        var id: String?
        switch mapping.identity {
        case .uuidAttribute(let name):
            if case .uuid(let bytes)? = schema.attribute(name)?.read(object) { id = UUIDText.text(bytes) }
        case .textAttribute(let name):
            if case .string(let text)? = schema.attribute(name)?.read(object) { id = text.lowercased() }
        case .generated:
            break
        }
        let ref = ObjectRef(entity: schema.entity, id: id ?? UUID().uuidString.lowercased())
        let registration = Registration(object: object, ref: ref, schema: schema)
        registrations[ObjectIdentifier(object)] = registration
        // A record the context holds for that identity keeps its place: the save refuses the second one for
        // the row (or an upsert adopts the stored record into it only when nothing else stands for it).
        if byRef[ref] == nil { byRef[ref] = registration } else { shadowedRefs.insert(ref) }
        insertionOrder.append(ObjectIdentifier(object))
        return registration
    }

    func unregister(_ registration: Registration) {
        registrations[ObjectIdentifier(registration.object)] = nil
        forgetRef(of: registration)
        insertionOrder.removeAll { $0 == ObjectIdentifier(registration.object) }
    }

    /// Removes `registration`'s entry by reference, unless another registration holds it (a new record given
    /// the identity of one held: that one keeps it).
    func forgetRef(of registration: Registration) {
        let ref = registration.ref
        guard byRef[ref] === registration else { return }
        byRef[ref] = nil
        // A new record given that identity takes the entry (the held one was deleted: it now stands for the
        // row, or will once saved). Rare: looked for among every registration.
        guard shadowedRefs.contains(ref) else { return }
        let others = registrations.values.filter { $0.ref == ref && $0 !== registration }
        byRef[ref] = others.first
        if others.count <= 1 { shadowedRefs.remove(ref) }
    }

    /// Unregisters every one of `batch` (one pass over the insertion order, however many).
    func unregister(_ batch: [Registration]) {
        guard batch.count > 1 else {
            if let only = batch.first { unregister(only) }
            return
        }
        var leaving = Set<ObjectIdentifier>(minimumCapacity: batch.count)
        for registration in batch {
            registrations[ObjectIdentifier(registration.object)] = nil
            forgetRef(of: registration)
            leaving.insert(ObjectIdentifier(registration.object))
        }
        insertionOrder.removeAll { leaving.contains($0) }
    }

    /// The identity of a registered record (for predicate literals that are records).
    func identity(of object: AnyObject) -> String? {
        registrations[ObjectIdentifier(object)]?.ref.id
    }

    func currentSnapshot(_ registration: Registration) -> Snapshot {
        Snapshot(
            attributes: registration.schema.readAttributes(registration.object),
            relationships: currentRelationships(registration)
        )
    }

    func currentRelationships(_ registration: Registration) -> [[ObjectRef]] {
        registration.schema.relationships.map { slot in
            slot.read(registration.object).compactMap { registrations[ObjectIdentifier($0)]?.ref }
        }
    }
}
