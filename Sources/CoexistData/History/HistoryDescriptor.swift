public import CoexistModel
public import Foundation

/// Which history transactions to read or delete (in the spirit of SwiftData's `HistoryDescriptor`): a token
/// range, an author, a limit.
///
/// ```swift
/// let news = try context.fetchHistory(HistoryDescriptor(after: lastToken))
/// try context.deleteHistory(HistoryDescriptor(before: lastProcessedToken))
/// ```
public struct HistoryDescriptor: Sendable, Hashable {
    /// Only transactions after this token.
    public var after: Int64?
    /// Only transactions before this token (for ``ModelContext/deleteHistory(_:)``: everything older).
    public var before: Int64?
    /// Only transactions of this author.
    public var author: String?
    /// At most this many transactions, oldest first.
    public var fetchLimit: Int?

    /// A descriptor; with no argument, every transaction.
    public init(after: Int64? = nil, before: Int64? = nil, author: String? = nil, fetchLimit: Int? = nil) {
        self.after = after
        self.before = before
        self.author = author
        self.fetchLimit = fetchLimit
    }
}

/// One saved transaction as the new stack sees it (SwiftData's `DefaultHistoryTransaction`): its token,
/// when and by whom, and its changes to records of the new schema.
public struct DefaultHistoryTransaction: Sendable, Hashable {
    /// The transaction's token: increasing across both stacks.
    public var token: Int64
    /// When it was saved.
    public var timestamp: Date
    /// The saving context's author (coexistd's `author` for its mirrors of Core Data's saves).
    public var author: String?
    /// The saving context's name.
    public var contextName: String?
    /// Its changes to records, in the order they were recorded (none for a Core Data save: coexistd's
    /// mirror of it has them).
    public var changes: [DefaultHistoryChange]
}

/// One changed record of a transaction (SwiftData's `HistoryInsert`, `HistoryUpdate`, `HistoryDelete`).
public enum DefaultHistoryChange: Sendable, Hashable {
    case insert(PersistentIdentifier)
    /// The record and the attributes and relationships the update changed (nil when not recorded).
    case update(PersistentIdentifier, updatedAttributes: Set<String>?)
    /// The record and the values the model preserves after deletion.
    case delete(PersistentIdentifier, tombstone: [String: AttributeValue])

    /// The changed record.
    public var changedPersistentIdentifier: PersistentIdentifier {
        switch self {
        case .insert(let identifier), .update(let identifier, _), .delete(let identifier, _): identifier
        }
    }
}
