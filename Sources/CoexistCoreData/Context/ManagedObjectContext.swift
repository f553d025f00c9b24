import CoexistHistory
import CoexistLegacyStore
public import CoexistModel
import CoexistSQLite
public import Foundation

/// A context over a Core Data store (`NSManagedObjectContext`): it fetches managed objects, tracks
/// inserts, changes and deletes, and saves them as one SQLite transaction that Core Data reads as its own
/// (`Z_PK`/`Z_OPT` upkeep, both sides of every relationship, delete rules, persistent history with the
/// context's ``transactionAuthor``).
///
/// ```swift
/// let context = try ManagedObjectContext(storeAt: "/var/lib/app/App.sqlite",
///                                        modelAt: "App.xcdatamodeld")
/// context.transactionAuthor = "legacy-app"
/// let task = context.insertNewObject(forEntityName: "Task")
/// task.setValue("Buy milk", forKey: "title")
/// try context.save()
/// ```
///
/// Saves use optimistic locking through `Z_OPT`: an object another writer changed since the context read
/// it is a conflict, handled by ``mergePolicy``. The context holds one object per stored object (its
/// identity map) and is not `Sendable`: use it from one thread or task.
public final class ManagedObjectContext {
    /// The store.
    let store: LegacyStore
    /// The model (from the given `.xcdatamodeld`, or the store's `Z_MODELCACHE`).
    public let model: Model
    let schema: StoreSchema
    /// The store's `Z_UUID`, part of every permanent object URI.
    public let storeIdentifier: String
    /// Whether the context may save.
    public let isReadOnly: Bool
    /// Recorded with every save's history transaction (`transactionAuthor`).
    public var transactionAuthor: String?
    /// Recorded with every save's history transaction (`name`).
    public var name: String?
    /// What a save does with objects changed elsewhere since they were read.
    public var mergePolicy = MergePolicy.error
    var registered: [ManagedObjectID: ManagedObject] = [:]
    /// Every entity's attributes and relationships (inherited ones included) by name, built once: key-value
    /// access looks a key up at every call.
    let properties: [String: EntityProperties]
    var insertedOrder: [ManagedObject] = []
    var deletedObjects: [ManagedObject] = []
    var classes: [String: ManagedObject.Type] = [:]
    /// The last history token merged (``mergeChangesFromStore()``); the store's last token at opening.
    public internal(set) var lastMergedToken: Int64 = 0
    /// Tokens of this context's own saves not merged yet: merging skips them.
    var ownTokens: Set<Int64> = []

    /// Opens the store at `path` for reading and saving.
    ///
    /// - Parameters:
    ///   - modelPath: the app's `.xcdatamodeld` (its current version) or `.xcdatamodel`; nil to use the
    ///     model the store keeps (`Z_MODELCACHE`).
    ///   - readOnly: open without write access: saves fail with ``CoreDataError/readOnly(path:)``.
    public init(storeAt path: String, modelAt modelPath: String? = nil, readOnly: Bool = false) throws(CoreDataError) {
        let opened: LegacyStore
        do {
            let model = try modelPath.map { path throws(ModelError) in try XCDataModelReader.read(path: path) }
            opened = try LegacyStore(
                path: path,
                model: model,
                modelPath: modelPath,
                options: readOnly ? .readOnly : OpenOptions()
            )
            try PredicateFunctions.register(on: opened.connection)
        } catch {
            throw .store("\(error)")
        }
        guard let model = opened.model, let schema = opened.schema else {
            throw .store("\(path): the store keeps no model; give the app's .xcdatamodeld")
        }
        store = opened
        self.model = model
        self.schema = schema
        properties = EntityProperties.index(model)
        storeIdentifier = opened.metadata.storeUUID
        isReadOnly = readOnly
        do {
            if try HistoryTables.exist(opened.connection) {
                lastMergedToken = try HistoryGaps.lastIssuedToken(opened.connection)
            }
        } catch {
            throw .store("\(error)")
        }
    }

    /// Objects that outlive their context answer no key (``ManagedObject/value(forKey:)`` reads a loaded
    /// object's values without its context while it lives).
    deinit {
        for object in registered.values { object.outlivedContext = true }
    }

    /// Makes fetches return objects of `type` for its ``ManagedObject/entityName`` (and, for
    /// `entityName`, the given one instead).
    public func register(_ type: ManagedObject.Type, forEntityName entityName: String? = nil) {
        classes[entityName ?? type.entityName] = type
    }

    /// The path of the store's file.
    public var path: String { store.path }

    // MARK: Tracking

    /// A new object of `entityName`, of its registered class (`NSEntityDescription.insertNewObject`).
    public func insertNewObject(forEntityName entityName: String) -> ManagedObject {
        let type = classes[entityName] ?? ManagedObject.self
        return type.init(entityName: entityName, insertInto: self)
    }

    /// Starts tracking a new object; it is written by the next ``save()``. An object deleted, or whose context
    /// is gone, is not inserted: an object belongs to one context only (as a managed object does).
    public func insert(_ object: ManagedObject) {
        guard object.managedObjectContext == nil, !object.isDeleted, !object.outlivedContext else { return }
        if object.objectID.storeIdentifier.isEmpty {
            object.objectID = ManagedObjectID(
                temporaryFor: object.objectID.entityName,
                storeIdentifier: storeIdentifier
            )
        }
        object.managedObjectContext = self
        object.isInserted = true
        if model.entity(named: object.entity) == nil {
            object.problems.append(.unknownEntity(object.entity))
        }
        registered[object.objectID] = object
        insertedOrder.append(object)
    }

    /// Marks `object` for deletion by the next save (with the model's delete rules); an object inserted
    /// and not saved is simply forgotten.
    public func delete(_ object: ManagedObject) {
        guard object.managedObjectContext === self, !object.isDeleted else { return }
        if object.isInserted {
            forget(object)
            object.isInserted = false
            object.isDeleted = true
            return
        }
        // The version a delete is checked against is the one read now, as Core Data fires a fault it
        // deletes; a fault whose row is already gone is a conflict at save.
        if object.isFault {
            do {
                try fulfill(object)
            } catch .objectNotFound {
                // Gone already: the save reports the conflict.
            } catch {
                // Its version could not be read: the save refuses, naming why, rather than delete unchecked.
                object.problems.append(error)
            }
        }
        object.isDeleted = true
        deletedObjects.append(object)
    }

    /// Whether anything was inserted, deleted or changed since the last save.
    public var hasChanges: Bool {
        !insertedOrder.isEmpty || !deletedObjects.isEmpty || registered.values.contains { !$0.pending.isEmpty }
    }

    /// Objects inserted and not saved yet.
    public var insertedObjects: Set<ManagedObject> { Set(insertedOrder) }
    /// Saved objects with unsaved changes.
    public var updatedObjects: Set<ManagedObject> { Set(registered.values.filter(\.isUpdated)) }
    /// Objects deleted and not saved yet.
    public var deletedObjectsPending: Set<ManagedObject> { Set(deletedObjects) }
    /// Every object the context holds.
    public var registeredObjects: Set<ManagedObject> { Set(registered.values) }

    /// Discards every unsaved change: inserted objects are forgotten, deleted ones restored, changed ones
    /// get their stored values back.
    public func rollback() {
        for object in insertedOrder {
            forget(object)
            object.isInserted = false
            object.isDeleted = true
        }
        insertedOrder = []
        for object in deletedObjects { object.isDeleted = false }
        deletedObjects = []
        for object in registered.values {
            object.pending = [:]
            object.problems = []
            object.transients = [:]
        }
    }

    /// Reads `object` from the store again (`refresh(_:mergeChanges:)`): without unsaved changes, or with
    /// `mergeChanges` false (they are discarded), it becomes a fault that loads on next use. With
    /// `mergeChanges` and unsaved changes it reads the stored state now and keeps its changes on top: its
    /// next save is checked against the version read here (against the one read before, when the store
    /// cannot be read or no longer holds the object).
    public func refresh(_ object: ManagedObject, mergeChanges: Bool) {
        guard object.managedObjectContext === self, !object.isInserted else { return }
        if !mergeChanges {
            object.pending = [:]
            object.problems = []
            object.transients = [:]
        }
        // A pending delete is checked against the version read, like an unsaved change.
        if object.pending.isEmpty && !object.isDeleted {
            object.snapshot = nil
        } else {
            reloadKeepingChanges(object)
        }
    }

    /// Refreshes every held object keeping unsaved changes (`refreshAllObjects()`), as
    /// ``refresh(_:mergeChanges:)`` with `mergeChanges` true.
    public func refreshAllObjects() {
        for object in registered.values where !object.isInserted { refresh(object, mergeChanges: true) }
    }

    /// Replaces the snapshot of an object with unsaved changes by the stored state, with the members of
    /// each to-many it changed (the state its save is compared with); keeps the old one on failure.
    private func reloadKeepingChanges(_ object: ManagedObject) {
        guard let pk = object.objectID.pk,
            let stored = try? store.blockObject(ObjectID(entity: object.entity, pk: pk))
        else { return }
        let previous = object.snapshot
        fill(object, from: stored)
        for (key, change) in object.pending {
            guard case .toMany = change else { continue }
            if (try? related(object, key)) == nil {
                object.snapshot = previous
                return
            }
        }
    }

    func forget(_ object: ManagedObject) {
        registered[object.objectID] = nil
        insertedOrder.removeAll { $0 === object }
        deletedObjects.removeAll { $0 === object }
        object.managedObjectContext = nil
    }

    // MARK: Identities

    /// The object with identity `id`: the one the context holds, else a fault that loads on first use
    /// (`object(with:)`).
    public func object(with id: ManagedObjectID) -> ManagedObject {
        if let known = registered[id] { return known }
        let object = make(id, as: objectClass(id.entityName))
        registered[id] = object
        return object
    }

    /// The class of `entity`'s objects: the one registered for it, else ``ManagedObject``.
    func objectClass(_ entity: String) -> ManagedObject.Type { classes[entity] ?? ManagedObject.self }

    /// A fault of `type` with identity `id` in this context, not registered yet.
    func make(_ id: ManagedObjectID, as type: ManagedObject.Type) -> ManagedObject {
        let object = type.init(entityName: id.entityName, insertInto: nil)
        object.objectID = id
        object.managedObjectContext = self
        return object
    }

    /// The object with identity `id`, loaded now; fails when the store no longer holds it
    /// (`existingObject(with:)`).
    public func existingObject(with id: ManagedObjectID) throws(CoreDataError) -> ManagedObject {
        let object = self.object(with: id)
        if object.isFault { try fulfill(object) }
        return object
    }

    /// The identity a URI from ``ManagedObjectID/uriRepresentation()`` names, when it is of this store.
    public func managedObjectID(forURIRepresentation uri: URL) -> ManagedObjectID? {
        let text = uri.absoluteString
        let prefix = "x-coredata://\(storeIdentifier)/"
        guard text.hasPrefix(prefix) else { return nil }
        let parts = text.dropFirst(prefix.count).split(separator: "/")
        guard parts.count == 2, model.entity(named: String(parts[0])) != nil, parts[1].first == "p",
            let pk = Int64(parts[1].dropFirst()), pk > 0
        else { return nil }
        return ManagedObjectID(entityName: String(parts[0]), pk: pk, storeIdentifier: storeIdentifier)
    }

    func identity(_ id: ObjectID) -> ManagedObjectID {
        ManagedObjectID(entityName: id.entity, pk: id.pk, storeIdentifier: storeIdentifier)
    }
}
