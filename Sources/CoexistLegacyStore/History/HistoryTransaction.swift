/// The kind of change one `ACHANGE` row records (`NSPersistentHistoryChangeType`).
public enum ChangeType: Int, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    case insert = 0
    case update = 1
    case delete = 2

    public var description: String {
        switch self {
        case .insert: "insert"
        case .update: "update"
        case .delete: "delete"
        }
    }
}

/// One saved transaction of Core Data's persistent history (`ATRANSACTION`) with its changes.
public struct HistoryTransaction: Sendable, Hashable {
    /// `ATRANSACTION.Z_PK`: the transaction number, strictly increasing.
    public var token: Int64
    /// `ZTIMESTAMP`: seconds since 2001-01-01 UTC.
    public var timestamp: Double
    /// The transaction author (`transactionAuthor`), when set.
    public var author: String?
    /// The bundle identifier of the writing app.
    public var bundleID: String?
    /// The managed object context's name.
    public var contextName: String?
    /// The writing process's name (`ZPROCESSIDTS`: a name, not a pid).
    public var processName: String?
    /// The changes, in `ACHANGE.Z_PK` order.
    public var changes: [HistoryChange]

    /// Creates a transaction.
    public init(
        token: Int64,
        timestamp: Double,
        author: String? = nil,
        bundleID: String? = nil,
        contextName: String? = nil,
        processName: String? = nil,
        changes: [HistoryChange] = []
    ) {
        self.token = token
        self.timestamp = timestamp
        self.author = author
        self.bundleID = bundleID
        self.contextName = contextName
        self.processName = processName
        self.changes = changes
    }

    /// Change counts by type.
    public var counts: HistorySummary.Changes {
        HistorySummary.Changes(
            insert: changes.filter { $0.type == .insert }.count,
            update: changes.filter { $0.type == .update }.count,
            delete: changes.filter { $0.type == .delete }.count
        )
    }
}

/// One changed object (`ACHANGE`): what happened, to which object, which properties, and for deletes the
/// preserved values.
public struct HistoryChange: Sendable, Hashable {
    /// `ACHANGE.Z_PK`.
    public var changeID: Int64
    /// Insert, update or delete.
    public var type: ChangeType
    /// `ZENTITY`: the concrete entity's number.
    public var entityNumber: Int
    /// The entity's name, nil when the number is not an entity of the model (reported, never guessed).
    public var entity: String?
    /// `ZENTITYPK`: the object's `Z_PK`.
    public var objectPK: Int64
    /// For updates: the changed properties decoded from `ZCOLUMNS`; nil when the bitmap cannot be decoded.
    public var properties: [String]?
    /// The raw `ZCOLUMNS` bitmap.
    public var columns: [UInt8]?
    /// For deletes: preserved attribute values by name (`ZTOMBSTONEn`).
    public var tombstone: [String: AttributeValue]

    /// Creates a change.
    public init(
        changeID: Int64,
        type: ChangeType,
        entityNumber: Int,
        entity: String?,
        objectPK: Int64,
        properties: [String]? = nil,
        columns: [UInt8]? = nil,
        tombstone: [String: AttributeValue] = [:]
    ) {
        self.changeID = changeID
        self.type = type
        self.entityNumber = entityNumber
        self.entity = entity
        self.objectPK = objectPK
        self.properties = properties
        self.columns = columns
        self.tombstone = tombstone
    }
}
