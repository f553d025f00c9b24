public import CoexistHistory

/// What a save wrote.
public struct SaveResult: Sendable, Hashable {
    /// The history transaction's number (`ATRANSACTION.Z_PK`), nil when the save changed nothing.
    public var token: Int64?
    /// The changes recorded, one per object, in the order objects were first touched.
    public var changes: [HistoryChange]
}
