/// Why a context operation failed. Nothing of a failed save is written, and the context keeps its changes.
public enum CoreDataError: Error, Sendable, CustomStringConvertible {
    /// A predicate format string that does not parse: `position` is the character offset.
    case predicate(format: String, position: Int, reason: String)
    /// A predicate or sort that parses but cannot apply to `entity` (unknown key, wrong type, …).
    case unsupportedPredicate(entity: String, reason: String)
    /// No entity of that name in the model.
    case unknownEntity(String)
    /// The entity has no property of that name.
    case unknownKey(entity: String, key: String)
    /// A value of the wrong type for a property, or one the model forbids.
    case validation(object: String, key: String, reason: String)
    /// Optimistic locking failed under the ``MergePolicy/error`` policy: other writers changed or
    /// deleted these objects since the context read them.
    case mergeConflict([MergeConflict])
    /// The object is not (or no longer) in the store.
    case objectNotFound(String)
    /// History the context had not merged yet was deleted (`deleteHistory`, coexistd's retention): the
    /// changes after token `after` through `resumedAfter` cannot be merged; objects the context holds may be
    /// stale: fetch them again (Core Data's expired history token). The next merge goes on after
    /// `resumedAfter`.
    case historyExpired(after: Int64, resumedAfter: Int64)
    /// The context was opened read-only.
    case readOnly(path: String)
    /// The store refused the operation (SQLite, model/store mismatch, a rule of the model).
    case store(String)

    public var description: String {
        switch self {
        case .predicate(let format, let position, let reason):
            "cannot parse the predicate \"\(format)\" at character \(position): \(reason)"
        case .unsupportedPredicate(let entity, let reason): "predicate on \(entity): \(reason)"
        case .unknownEntity(let name): "the model has no entity named \(name)"
        case .unknownKey(let entity, let key): "\(entity) has no property named \(key)"
        case .validation(let object, let key, let reason):
            key.isEmpty ? "\(object): \(reason)" : "\(object).\(key): \(reason)"
        case .mergeConflict(let conflicts):
            "merge conflict: " + conflicts.map(\.description).joined(separator: "; ")
        case .objectNotFound(let object): "\(object) is not in the store"
        case .readOnly(let path): "\(path): the context is read-only"
        case .historyExpired(let after, let resumed):
            "the history after token \(after) through \(resumed) was deleted before this context merged it: fetch again"
        case .store(let detail): detail
        }
    }
}

/// One object whose stored version moved on since the context read it (`NSMergeConflict`).
public struct MergeConflict: Sendable, Hashable, CustomStringConvertible {
    /// The object.
    public var objectID: ManagedObjectID
    /// The version (`Z_OPT`) the context read.
    public var cachedVersion: Int64
    /// The version now stored; nil when another writer deleted the object.
    public var persistedVersion: Int64?

    public var description: String {
        "\(objectID) was read at version \(cachedVersion), the store "
            + (persistedVersion.map { "holds version \($0)" } ?? "no longer holds it (deleted)")
    }
}

/// What a save does with objects other writers changed since the context read them
/// (`NSManagedObjectContext.mergePolicy`).
public enum MergePolicy: Sendable, Hashable {
    /// The save fails with ``CoreDataError/mergeConflict(_:)`` listing every conflict
    /// (`NSErrorMergePolicy`, the default).
    case error
    /// Property by property, the context's changes overwrite the store's; properties the context did not
    /// change keep the store's values (`NSMergeByPropertyObjectTrumpMergePolicy`). A delete still deletes.
    case objectWins
    /// Property by property, what other writers changed wins; the context's changes to other properties
    /// are saved (`NSMergeByPropertyStoreTrumpMergePolicy`). A delete of an object changed elsewhere is
    /// cancelled.
    case storeWins
}
