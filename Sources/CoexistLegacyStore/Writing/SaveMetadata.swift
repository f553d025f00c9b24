/// Who saves: the strings Core Data records with each history transaction (§4.2), interned in
/// `ATRANSACTIONSTRING`.
public struct SaveMetadata: Sendable, Hashable {
    /// `transactionAuthor`: coexist's bridge uses its own author so it can skip its own transactions.
    public var author: String?
    /// The managed object context's name.
    public var contextName: String?
    /// The bundle identifier (Core Data records the app's).
    public var bundleID: String?
    /// The process name (Core Data records a name, not a pid).
    public var processName: String?

    /// Creates metadata.
    public init(author: String? = nil, contextName: String? = nil, bundleID: String? = nil, processName: String? = nil)
    {
        self.author = author
        self.contextName = contextName
        self.bundleID = bundleID
        self.processName = processName
    }
}

/// What a save wrote.
public struct SaveResult: Sendable, Hashable {
    /// The history transaction's number (`ATRANSACTION.Z_PK`), nil when the save changed nothing.
    public var token: Int64?
    /// The changes recorded, one per object, in the order objects were first touched.
    public var changes: [HistoryChange]
}
