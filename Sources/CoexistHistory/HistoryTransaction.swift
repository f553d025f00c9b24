public import CoexistModel

/// The kind of change one history row records (`NSPersistentHistoryChangeType`: 0, 1, 2).
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

/// Which schema a change was made in.
public enum Side: String, Sendable, Hashable, Codable, CustomStringConvertible {
    /// Core Data's Z-tables, recorded in `ACHANGE`.
    case legacy
    /// coexist's new schema, recorded in `coexist_change`.
    case new

    public var description: String { rawValue }
}

/// One saved transaction: an `ATRANSACTION` row (whichever side saved it) with its changes.
///
/// Both sides number their transactions from the same `Z_PRIMARYKEY` row (16002), so ``token`` is one
/// strictly increasing sequence across the legacy store and the new store.
public struct HistoryTransaction: Sendable, Hashable {
    /// `ATRANSACTION.Z_PK`: the transaction number, strictly increasing across both sides.
    public var token: Int64
    /// `ZTIMESTAMP`: seconds since 2001-01-01 UTC.
    public var timestamp: Double
    /// The transaction author, when set.
    public var author: String?
    /// The bundle identifier of the writing app.
    public var bundleID: String?
    /// The context's name.
    public var contextName: String?
    /// The writing process's name.
    public var processName: String?
    /// The changes, in the order they were recorded.
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

    /// The side that saved the transaction: `.new` when it has new-schema changes, else `.legacy`
    /// (Core Data's own transactions, including those without changes).
    public var side: Side { changes.contains { $0.side == .new } ? .new : .legacy }

    /// Change counts by type.
    public var counts: HistorySummary.Changes {
        HistorySummary.Changes(
            insert: changes.filter { $0.type == .insert }.count,
            update: changes.filter { $0.type == .update }.count,
            delete: changes.filter { $0.type == .delete }.count
        )
    }
}

/// One changed object: what happened, to which object, which properties, and for deletes the preserved
/// values. Legacy changes identify the object by entity number and `Z_PK`; new-schema changes by identity.
public struct HistoryChange: Sendable, Hashable {
    /// `ACHANGE.Z_PK` or `coexist_change.id`.
    public var changeID: Int64
    /// The schema the change was made in.
    public var side: Side
    /// Insert, update or delete.
    public var type: ChangeType
    /// The entity's name; nil for a legacy entity number the model does not know (reported, never guessed).
    public var entity: String?
    /// Legacy: `ZENTITY`, the concrete entity's number.
    public var entityNumber: Int?
    /// Legacy: `ZENTITYPK`, the object's `Z_PK`.
    public var objectPK: Int64?
    /// New schema: the object's identity (a lower-case UUID).
    public var objectID: String?
    /// For updates: the changed properties; nil when a legacy bitmap cannot be decoded.
    public var properties: [String]?
    /// Legacy: the raw `ZCOLUMNS` bitmap.
    public var columns: [UInt8]?
    /// For deletes: preserved attribute values by name.
    public var tombstone: [String: AttributeValue]
    /// New schema, inserts and updates: what the change set, as of its commit, as `coexist_change.vals`
    /// holds it (nil when not recorded, or not read); ``recordedValues`` decodes it.
    public var recordedValuesJSON: String?

    /// Creates a change.
    public init(
        changeID: Int64,
        side: Side = .legacy,
        type: ChangeType,
        entityNumber: Int? = nil,
        entity: String?,
        objectPK: Int64? = nil,
        objectID: String? = nil,
        properties: [String]? = nil,
        columns: [UInt8]? = nil,
        tombstone: [String: AttributeValue] = [:],
        recordedValuesJSON: String? = nil
    ) {
        self.changeID = changeID
        self.side = side
        self.type = type
        self.entityNumber = entityNumber
        self.entity = entity
        self.objectPK = objectPK
        self.objectID = objectID
        self.properties = properties
        self.columns = columns
        self.tombstone = tombstone
        self.recordedValuesJSON = recordedValuesJSON
    }
}
