public import CoexistModel

/// JSON shapes of history for `coexistctl history` (and later the event stream).
///
/// A transaction summary is `{token, timestamp, author, contextName, bundleID, processName, changes:
/// {insert, update, delete}}`; a full transaction lists `changes: [{side, entity, entityNumber, pk, id, type,
/// properties, tombstone}]` (`entityNumber` and `pk` for legacy changes, `id` for new-schema ones). Timestamps are ISO-8601 UTC with microseconds; absent strings are `null`.
public struct HistoryTransactionSummary: Encodable, Sendable {
    let transaction: HistoryTransaction

    /// Wraps a transaction for summary encoding.
    public init(_ transaction: HistoryTransaction) { self.transaction = transaction }

    enum CodingKeys: String, CodingKey {
        case token, timestamp, side, author, contextName, bundleID, processName, changes
    }

    /// Encodes the summary.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try transaction.encodeHeader(into: &container)
        try container.encode(transaction.counts, forKey: .changes)
    }
}

/// A transaction with every change, for `coexistctl history show`.
public struct HistoryTransactionDetail: Encodable, Sendable {
    let transaction: HistoryTransaction

    /// Wraps a transaction for full encoding.
    public init(_ transaction: HistoryTransaction) { self.transaction = transaction }

    /// Encodes the transaction and its changes.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: HistoryTransactionSummary.CodingKeys.self)
        try transaction.encodeHeader(into: &container)
        try container.encode(transaction.changes.map(ChangeDetail.init), forKey: .changes)
    }
}

struct ChangeDetail: Encodable {
    let change: HistoryChange

    enum CodingKeys: String, CodingKey { case side, entity, entityNumber, pk, id, type, properties, tombstone }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(change.side.rawValue, forKey: .side)
        try container.encode(change.entity, forKey: .entity)
        try container.encode(change.entityNumber, forKey: .entityNumber)
        try container.encode(change.objectPK, forKey: .pk)
        try container.encode(change.objectID, forKey: .id)
        try container.encode(change.type.description, forKey: .type)
        try container.encode(change.type == .update ? change.properties : [], forKey: .properties)
        try container.encode(change.tombstone.mapValues(JSONAttributeValue.init), forKey: .tombstone)
    }
}

/// An attribute value as JSON: numbers as numbers (non-finite ones as strings), dates as ISO-8601 text,
/// UUIDs as lower-case text, bytes as base64.
public struct JSONAttributeValue: Encodable, Sendable {
    let value: AttributeValue

    /// Wraps a value.
    public init(_ value: AttributeValue) { self.value = value }

    /// Encodes the value (as ``HistoryArchive/Scalar``: the one JSON form of a value).
    public func encode(to encoder: any Encoder) throws {
        try HistoryArchive.Scalar(value).encode(to: encoder)
    }
}

extension HistoryTransaction {
    func encodeHeader(into container: inout KeyedEncodingContainer<HistoryTransactionSummary.CodingKeys>) throws {
        try container.encode(token, forKey: .token)
        try container.encode(ReferenceDate.iso8601(secondsSince2001: timestamp), forKey: .timestamp)
        try container.encode(side.rawValue, forKey: .side)
        try container.encode(author, forKey: .author)
        try container.encode(contextName, forKey: .contextName)
        try container.encode(bundleID, forKey: .bundleID)
        try container.encode(processName, forKey: .processName)
    }
}
