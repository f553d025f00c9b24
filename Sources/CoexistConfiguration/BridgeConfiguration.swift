/// How the bridge resolves a property changed on both sides since the last mirrored state.
public enum ConflictPolicy: String, Sendable, CaseIterable {
    /// The change with the higher token wins (tokens are unique, so there is no tie).
    case laterWins = "later-wins"
    /// The legacy side's change wins.
    case legacyWins = "legacy-wins"
    /// The new side's change wins.
    case newWins = "new-wins"
}

/// The bridge's settings.
public struct BridgeConfiguration: Sendable {
    /// The author of the bridge's own transactions: transactions by this author are never mirrored (no echo).
    public var author: String
    /// The bundle identifier recorded with the bridge's own transactions (Core Data never leaves it empty);
    /// nil: the author.
    public var bundleID: String?
    /// At most this many source transactions are mirrored in one SQLite write transaction.
    public var batchSize: Int
    /// The conflict policy.
    public var conflictPolicy: ConflictPolicy
    /// Objects copied per write transaction during initial sync (bounded memory).
    public var initialSyncChunk: Int

    /// Creates settings; the defaults are the documented ones of `config/coexistd.conf`.
    public init(
        author: String = "coexistd",
        bundleID: String? = nil,
        batchSize: Int = 1_024,
        conflictPolicy: ConflictPolicy = .laterWins,
        initialSyncChunk: Int = 500
    ) {
        self.author = author
        self.bundleID = bundleID
        self.batchSize = max(1, batchSize)
        self.conflictPolicy = conflictPolicy
        self.initialSyncChunk = max(1, initialSyncChunk)
    }
}
