import CoexistLegacyStore
import CoexistModel
import Foundation

/// An object of a Core Data store (`NSManagedObject`): key-value access to its attributes and
/// relationships, tracked by its context until saved.
///
/// Use it as it is (`object.value(forKey: "title")`) or subclass it with typed properties, as Core Data's
/// generated classes do, and register the subclass with the context so that fetches return it:
///
/// ```swift
/// final class Task: ManagedObject {
///     override class var entityName: String { "Task" }
///     var title: String? {
///         get { value(forKey: "title") as? String }
///         set { setValue(newValue, forKey: "title") }
///     }
///     var category: Category? {
///         get { value(forKey: "category") as? Category }
///         set { setValue(newValue, forKey: "category") }
///     }
/// }
/// context.register(Task.self)
/// let task = Task(context: context)
/// ```
///
/// Values are the types Core Data's code generation uses: `String`, `Int16`/`Int32`/`Int64`, `Bool`,
/// `Double`, `Float`, `Decimal`, `Date`, `UUID`, `URL`, `Data`; a to-one is a `ManagedObject?`, an unordered
/// to-many a `Set<ManagedObject>`, an ordered one a `[ManagedObject]`. An object is identified by reference
/// (`Hashable` by identity), as managed objects are. Not `Sendable`: it belongs to its context's thread.
open class ManagedObject: Hashable, CustomStringConvertible {
    /// What a relationship or attribute is set to until the next save.
    enum Pending {
        case attribute(AttributeValue)
        case toOne(ManagedObject?)
        case toMany([ManagedObject])
    }

    /// The stored state the context last read.
    struct Snapshot {
        var version: Int64
        /// The names of the slots, shared by the objects read alike.
        var slots: AttributeSlots
        /// The stored attributes by slot, from ``base`` (a block shared with the other objects of a fetch, or
        /// the object's own when its row was read alone).
        var block: AttributeBlock
        /// Where the object's values start in ``block``.
        var base: Int
        var toOne: [String: ManagedObjectID]
        /// To-manys read so far (loaded on first use).
        var toMany: [String: [ManagedObjectID]] = [:]
        /// Whether the row was of the object's own entity (not of a sub-entity its identity did not name):
        /// only then do ``slots`` answer for the entity's keys.
        var isOfObjectEntity = true

        /// The stored value of the attribute `name`, or nil when the entity stores no such attribute.
        func attribute(_ name: String) -> AttributeValue? { slots.slot(of: name).map { block[base + $0] } }

        /// The app-facing value of the stored attribute `name` (`.some(nil)` when it is null), or nil when the
        /// entity stores no such attribute or the row is of a sub-entity the identity did not name.
        func storedValue(_ name: String) -> Any?? {
            guard isOfObjectEntity, let slot = slots.slot(of: name) else { return nil }
            return .some(ValueBridge.value(block[base + slot], type: slots.types[slot]))
        }
    }

    /// The entity a subclass stands for; by default the class's own name (as `NSManagedObject.entity()`).
    open class var entityName: String { String(describing: self) }

    // The object's state is unchecked for exclusive access (a fetch sets it for every object it makes): no
    // access to one of these properties ever starts while another to the same property is under way on the
    // same thread (each write is a plain assignment or one collection operation, its value computed first).
    // Across threads the check never helped: a context and its objects are used on one thread.
    /// The object's identity: temporary until its first save.
    @exclusivity(unchecked) public internal(set) var objectID: ManagedObjectID
    /// The context that tracks the object; nil once deleted and saved, or before it is inserted.
    @exclusivity(unchecked) public internal(set) weak var managedObjectContext: ManagedObjectContext?
    @exclusivity(unchecked) var snapshot: Snapshot?
    @exclusivity(unchecked) var pending: [String: Pending] = [:]
    var problems: [CoreDataError] = []
    /// The values set for transient attributes: kept in memory only, never written (as in Core Data).
    var transients: [String: AttributeValue] = [:]
    @exclusivity(unchecked) var batch: BatchLoader?
    /// Set when the context that held the object went away: its values are no longer answered.
    @exclusivity(unchecked) var outlivedContext = false
    /// Whether the object was inserted and not saved yet.
    @exclusivity(unchecked) public internal(set) var isInserted = false
    /// Whether the object is deleted (pending the next save, or saved).
    @exclusivity(unchecked) public internal(set) var isDeleted = false

    /// A new object of `entityName`, inserted into `context` when one is given (saved by its next save).
    public required init(entityName: String, insertInto context: ManagedObjectContext?) {
        objectID = ManagedObjectID(temporaryFor: entityName, storeIdentifier: context?.storeIdentifier ?? "")
        if let context { context.insert(self) }
    }

    /// A new object of the class's ``entityName``, inserted into `context` (`NSManagedObject(context:)`).
    public convenience init(context: ManagedObjectContext) {
        self.init(entityName: Self.entityName, insertInto: context)
    }

    /// The entity's name.
    public var entity: String { objectID.entityName }

    /// Whether the object's values are not loaded yet (they load on first use).
    public var isFault: Bool { snapshot == nil && !isInserted }

    /// Whether the object has unsaved changes (inserted, deleted, or properties set).
    public var hasChanges: Bool { isInserted || isDeleted || !pending.isEmpty }

    /// Whether the object is saved and has unsaved property changes.
    public var isUpdated: Bool { !isInserted && !isDeleted && !pending.isEmpty }

    /// Why the last ``value(forKey:)`` that returned nil for a failed read failed (an unknown key, an
    /// object no longer in the store, a store that could not be read); nil after a read that succeeded.
    /// A failed read changes nothing: it never stands in the way of a save.
    @exclusivity(unchecked) public internal(set) var lastAccessError: CoreDataError?

    /// The value of the attribute or relationship `key`; nil when unset, unknown, or no longer in the store
    /// (``lastAccessError`` says which).
    public func value(forKey key: String) -> Any? {
        // The common read, a stored attribute of a loaded object with no unsaved change: answered from the
        // snapshot, without loading the context's weak reference (not for a deleted object, the only kind a
        // context forgets, nor for one whose context is gone: neither has one).
        if !isDeleted, !isInserted, !outlivedContext, pending.isEmpty, let value = snapshot?.storedValue(key) {
            if lastAccessError != nil { lastAccessError = nil }
            return value
        }
        guard let context = managedObjectContext else { return pendingValue(key) }
        do {
            let value = try context.value(of: self, key)
            lastAccessError = nil
            return value
        } catch {
            lastAccessError = error
            return nil
        }
    }

    /// Sets the attribute or relationship `key` (to-manys take a `Set` or an array of objects). A value of
    /// the wrong type or an unknown key is refused by the next save, naming object and key.
    public func setValue(_ value: Any?, forKey key: String) {
        guard let context = managedObjectContext else {
            problems.append(.validation(object: "\(objectID)", key: key, reason: "the object is in no context"))
            return
        }
        do {
            try context.set(value, of: self, key)
        } catch {
            problems.append(error)
        }
    }

    /// Key-value access by subscript: `task["title"] = "Buy milk"`.
    public subscript(key: String) -> Any? {
        get { value(forKey: key) }
        set { setValue(newValue, forKey: key) }
    }

    /// The unsaved values by key (relationships as objects), as `changedValues()`.
    public func changedValues() -> [String: Any] {
        var result: [String: Any] = [:]
        for key in pending.keys { result[key] = pendingValue(key) ?? Optional<Any>.none as Any }
        return result
    }

    /// The stored version (`Z_OPT`) the context last read; 0 before the first save.
    public var version: Int64 { snapshot?.version ?? 0 }

    func pendingValue(_ key: String) -> Any? {
        switch pending[key] {
        case .attribute(let value)?:
            guard let context = managedObjectContext, let attribute = context.attribute(entity, key) else { return nil }
            return ValueBridge.value(value, attribute)
        // An object deleted in the context is no longer held by anything (nullify, as Core Data).
        case .toOne(let object)?: return object?.isDeleted == true ? nil : object
        case .toMany(let objects)?:
            let ordered = managedObjectContext?.relationship(entity, key)?.isOrdered ?? false
            let held = objects.filter { !$0.isDeleted }
            return ordered ? held as Any : Set(held) as Any
        case nil: return nil
        }
    }

    public static func == (lhs: ManagedObject, rhs: ManagedObject) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    public var description: String {
        "<\(type(of: self)) \(objectID)\(isFault ? " fault" : "")\(isDeleted ? " deleted" : "")>"
    }
}
