public import CoexistModel
public import Foundation

/// One saved transaction as the persistent history records it (`NSPersistentHistoryTransaction`): its
/// token, when and by whom, and its changes to Core Data objects.
public struct PersistentHistoryTransaction: Sendable, Hashable {
    /// The transaction number (`ATRANSACTION.Z_PK`, `transactionNumber`): increasing across both stacks.
    public var token: Int64
    /// When it was saved.
    public var timestamp: Date
    /// The context's `transactionAuthor` (coexistd's `author` for its mirrors of the new schema's saves).
    public var author: String?
    /// The context's name.
    public var contextName: String?
    /// The saving process's name.
    public var processName: String?
    /// The saving app's bundle identifier.
    public var bundleID: String?
    /// Its changes to Core Data objects, in the order they were recorded: none for a save of the new stack
    /// (Core Data sees such a transaction with no changes; coexistd's mirror of it has them).
    public var changes: [PersistentHistoryChange]
}

/// One changed object of a transaction (`NSPersistentHistoryChange`).
public struct PersistentHistoryChange: Sendable, Hashable {
    /// What happened to the object (`NSPersistentHistoryChangeType`).
    public enum ChangeType: Sendable, Hashable {
        case insert, update, delete
    }

    /// Insert, update or delete.
    public var changeType: ChangeType
    /// The object.
    public var changedObjectID: ManagedObjectID
    /// For an update, the properties it changed; nil otherwise, or when the store's record of them cannot be
    /// read.
    public var updatedProperties: Set<String>?
    /// For a delete, the values the model preserves after deletion (`preserveAfterDeletion`).
    public var tombstone: [String: AttributeValue]?
}

/// A request on the persistent history (`NSPersistentHistoryChangeRequest`), run by
/// ``ManagedObjectContext/execute(_:)``.
///
/// ```swift
/// let result = try context.execute(.fetchHistory(after: lastToken, author: "old-app"))
/// let old = try context.execute(.deleteHistory(before: lastProcessedToken))
/// ```
public struct PersistentHistoryChangeRequest: Sendable, Hashable {
    enum Kind: Sendable, Hashable {
        case fetchAfterToken(Int64)
        case fetchAfterDate(Date)
        case deleteBeforeToken(Int64)
        case deleteBeforeDate(Date)
    }

    let kind: Kind
    /// Only transactions of this author (a fetch's filter, as `NSPersistentHistoryTransaction.fetchRequest`
    /// with an author predicate).
    public var author: String?
    /// At most this many transactions (0: all).
    public var fetchLimit = 0

    /// The transactions after `token`, oldest first.
    public static func fetchHistory(after token: Int64, author: String? = nil) -> Self {
        PersistentHistoryChangeRequest(kind: .fetchAfterToken(token), author: author)
    }

    /// The transactions saved at or after `date`, oldest first.
    public static func fetchHistory(after date: Date, author: String? = nil) -> Self {
        PersistentHistoryChangeRequest(kind: .fetchAfterDate(date), author: author)
    }

    /// Deletes the history older than `token` (the transactions before it; the one at `token` stays), but
    /// never what coexistd has not mirrored yet or a durable consumer has not acknowledged: the result says
    /// where it stopped.
    public static func deleteHistory(before token: Int64) -> Self {
        PersistentHistoryChangeRequest(kind: .deleteBeforeToken(token))
    }

    /// Deletes the history saved before `date`, with the same holds as ``deleteHistory(before:)-(Int64)``.
    public static func deleteHistory(before date: Date) -> Self {
        PersistentHistoryChangeRequest(kind: .deleteBeforeDate(date))
    }
}

/// What a ``PersistentHistoryChangeRequest`` gave (`NSPersistentHistoryResult`).
public enum PersistentHistoryResult: Sendable, Hashable {
    /// A fetch's transactions, oldest first.
    case transactions([PersistentHistoryTransaction])
    /// A delete: how many transactions went, and through which token it deleted (nil when none), lower
    /// than asked when coexistd or a durable consumer still needed the rest.
    case deleted(count: Int, through: Int64?)
}
