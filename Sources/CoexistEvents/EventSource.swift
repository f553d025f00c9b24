public import CoexistBridge
public import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistProtocol
import CoexistSQLite
import CoexistStore

/// One change as it goes to subscribers, encoded once.
public struct EncodedEvent: Sendable {
    /// The transaction's token.
    public var token: Int64
    /// The transaction's time (seconds since 2001).
    public var timestamp: Double = 0
    /// What filters look at.
    public var entity: String?
    public var side: Side
    public var author: String?
    public var change: ChangeType
    /// Whether the bridge wrote it (a mirror).
    public var isMirror: Bool
    /// The event line without values, and with them when asked for.
    public var plain: WireLine
    public var withValues: WireLine?
    /// Whether the object's identity in both schemas (`id` and legacy `pk`) was known when it was encoded; an
    /// object the bridge has not mirrored yet has one of them null, and a later reading may know it.
    public var resolved = true
}

/// Turns history transactions into events: token, time, author, side, entity in both schemas, identity,
/// legacy `Z_PK`, change type, changed properties and, on request, values.
public final class EventSource {
    let engine: SyncEngine
    let reader: HistoryReader
    /// The exact values of recently changed objects, as the live path last published them (`remembering`).
    var memory = ValueMemory()
    /// ``unstable(_:)`` by entity.
    var unstableNames: [String: Set<String>] = [:]

    /// A source over the bridge's database.
    public init(engine: SyncEngine) throws {
        self.engine = engine
        var reader = try HistoryReader(connection: engine.connection, decoder: StoreChangeDecoder(store: engine.legacy))
        reader.readsRecordedValues = true
        self.reader = reader
    }

    /// Forgets the remembered values of every object `transaction` changed: the live path passes it
    /// without reading its events.
    public func forget(_ transaction: HistoryTransaction) { memory.forget(transaction) }

    /// Forgets every remembered value: the live path skipped transactions it did not see.
    public func forgetAll() { memory.clear() }

    /// The highest token committed.
    public func lastToken() throws -> Int64 { try reader.lastToken() }

    /// The oldest token still in the history (nil when empty).
    public func oldestToken() throws -> Int64? { try HistoryPruner.oldestToken(engine.connection) }

    /// Transactions with tokens in (`after`, `through`], at most `limit`.
    public func transactions(after: Int64, through: Int64, limit: Int) throws -> [HistoryTransaction] {
        guard through > after else { return [] }
        return try reader.transactions(after: after, limit: limit).filter { $0.token <= through }
    }

    /// An object as one side's history names it: what "changed again later" is judged by.
    public struct ChangedObject: Hashable, Sendable {
        var side: Side
        var entity: String?
        var pk: Int64?
        var id: String?

        init(side: Side, entity: String?, pk: Int64? = nil, id: String? = nil) {
            self.side = side
            self.entity = entity
            self.pk = pk
            self.id = id
        }

        /// The object `change` is about, on its side.
        public init(_ change: HistoryChange) {
            side = change.side
            entity = change.entity
            pk = change.side == .legacy ? change.objectPK : nil
            id = change.side == .new ? change.objectID : nil
        }
    }

    /// The events of one transaction. With `values`, the objects' values are read in one snapshot of the
    /// database; when that snapshot is later than the transaction (its last token `S` is not the event's),
    /// they may show later changes, and the event says so with `"asOf": S` — unless `unchangedSince` says no
    /// transaction after this one up to `S` changed the object on its side (then the values are the
    /// event's own). A delete's values are its tombstone, from the history itself: always its own. An update
    /// of the new side carries `before`, what its save recorded the changed attributes and to-ones held
    /// before it; a delete carries its tombstone as `before`. `remembering`: `transaction` is the next one
    /// after those passed before in token order (the live path), so what the source remembers of objects'
    /// exact values is kept current with it and gives updates and deletes of either side their `before`;
    /// otherwise that memory is neither read nor changed.
    public func events(
        _ transaction: HistoryTransaction,
        values: Bool,
        unchangedSince: ((ChangedObject) -> Bool)? = nil,
        remembering: Bool = false
    ) throws -> [EncodedEvent] {
        if values, engine.connection.isAutocommit {
            return try engine.connection.read {
                try self.events(transaction, values: true, unchangedSince: unchangedSince, remembering: remembering)
            }
        }
        do {
            var learnt: [(ChangedObject, [String: EventValue]?, Set<String>)] = []
            let events = try events(
                transaction,
                values: values,
                unchangedSince: unchangedSince,
                learn: remembering ? { learnt.append(($0, $1, $2)) } : nil
            )
            // Only once the whole transaction is encoded: a change's before is never what its own transaction
            // (a failed attempt at it included) left.
            for (object, read, uncertain) in learnt {
                if let read {
                    memory.remember(object, read, uncertain: uncertain, token: transaction.token)
                } else {
                    memory.forget(object)
                }
            }
            return events
        } catch {
            if remembering { memory.forget(transaction) }
            throw error
        }
    }

    /// The events of `transaction`; `learn` is told each object's values when they are its own, as of this
    /// transaction (nil when they are not, or not read), with the names whose values are not known exactly.
    /// Without `learn` (not the live path), what is remembered is not used either.
    private func events(
        _ transaction: HistoryTransaction,
        values: Bool,
        unchangedSince: ((ChangedObject) -> Bool)?,
        learn: ((ChangedObject, [String: EventValue]?, Set<String>) -> Void)?
    ) throws -> [EncodedEvent] {
        let snapshot = values ? try reader.lastToken() : transaction.token
        let isMirror = transaction.author == engine.configuration.author
        var events: [EncodedEvent] = []
        // The other side's keys of the transaction's objects, read at once: a query or two per root entity
        // the transaction changes, not one or two a change.
        var legacyObjects: [ObjectID] = []
        var newObjects: [ObjectRef] = []
        for change in transaction.changes {
            guard let entity = change.entity else { continue }
            if change.side == .legacy, let objectPK = change.objectPK {
                legacyObjects.append(ObjectID(entity: entity, pk: objectPK))
            } else if change.side == .new, let objectID = change.objectID {
                newObjects.append(ObjectRef(entity: entity, id: objectID))
            }
        }
        let identified = try engine.legacyIdentities(of: legacyObjects)
        let legacyPKs = try engine.legacyPKs(ofNew: newObjects)
        // What every event of the transaction says alike, or every event of one entity, made once.
        var fields = EventFields(
            timestamp: ReferenceDate.iso8601(secondsSince2001: transaction.timestamp),
            mirror: isMirror
        )
        for (index, change) in transaction.changes.enumerated() {
            var id = change.objectID
            var pk = change.objectPK
            if let entity = change.entity {
                if change.side == .legacy, let objectPK = change.objectPK {
                    id = identified[ObjectID(entity: entity, pk: objectPK)] ?? tombstoneIdentity(change)
                } else if change.side == .new, let objectID = change.objectID {
                    pk = legacyPKs[ObjectRef(entity: entity, id: objectID)]
                }
            }
            if fields.entity != change.entity {
                fields.entity = change.entity
                fields.legacyTable = change.entity.flatMap { engine.legacyTable(of: $0) }
                fields.newTable = change.entity.flatMap { engine.newTable(of: $0) }
            }
            let plain = WireLine(
                line(transaction, change, fields, index: index, id: id, pk: pk, values: nil),
                token: transaction.token
            )
            var withValues: WireLine?
            if values {
                let recordedValues = change.side == .new ? change.recordedValues : nil
                // A delete's values are its tombstone; what it recorded is only what the save changed first.
                let recorded = change.type == .delete ? nil : recordedValues.map { eventValues($0, change) }
                let own =
                    recorded != nil || snapshot == transaction.token || change.type == .delete
                    || unchangedSince?(ChangedObject(change)) == true
                let (read, uncertain) = try recorded.map { ($0, []) } ?? currentValues(change, id: id)
                let before =
                    learn == nil
                    ? recordedBefore(change, recorded: recordedValues)
                    : self.before(change, values: read, recorded: recordedValues)
                if let learn {
                    learn(
                        ChangedObject(change),
                        own && change.type != .delete && !read.isEmpty ? read : nil,
                        uncertain.union(unstable(change.entity))
                    )
                }
                withValues = WireLine(
                    line(
                        transaction,
                        change,
                        fields,
                        index: index,
                        id: id,
                        pk: pk,
                        values: read,
                        asOf: own ? nil : snapshot,
                        before: before
                    ),
                    token: transaction.token
                )
            } else {
                learn?(ChangedObject(change), nil, [])
            }
            events.append(
                EncodedEvent(
                    token: transaction.token,
                    timestamp: transaction.timestamp,
                    entity: change.entity,
                    side: change.side,
                    author: transaction.author,
                    change: change.type,
                    isMirror: isMirror,
                    plain: plain,
                    withValues: withValues,
                    resolved: change.entity == nil || (id != nil && pk != nil)
                )
            )
        }
        return events
    }

    private func tombstoneIdentity(_ change: HistoryChange) -> String? {
        guard let entity = change.entity, case .uuidAttribute(let name)? = engine.new.schema.entities[entity]?.identity,
            case .uuid(let bytes)? = change.tombstone[name]
        else { return nil }
        return UUIDText.text(bytes)
    }

    /// What an event says that its transaction (time, mirror) or its entity (tables) decides.
    private struct EventFields {
        var timestamp: String
        var mirror: Bool
        /// The entity the tables are of (nil before the first change of one).
        var entity: String?
        var legacyTable: String?
        var newTable: String?
    }

    private func line(
        _ transaction: HistoryTransaction,
        _ change: HistoryChange,
        _ fields: EventFields,
        index: Int,
        id: String?,
        pk: Int64?,
        values: [String: EventValue]?,
        asOf: Int64? = nil,
        before: [String: EventValue] = [:]
    ) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("type")
        writer.string("event")
        writer.key("token")
        writer.integer(transaction.token)
        writer.key("index")
        writer.integer(Int64(index))
        writer.key("count")
        writer.integer(Int64(transaction.changes.count))
        writer.key("timestamp")
        writer.string(fields.timestamp)
        writer.key("author")
        writer.string(transaction.author)
        writer.key("side")
        writer.string(change.side.rawValue)
        writer.key("mirror")
        writer.bool(fields.mirror)
        writer.key("entity")
        writer.string(change.entity)
        writer.key("legacyTable")
        writer.string(fields.legacyTable)
        writer.key("newTable")
        writer.string(fields.newTable)
        writer.key("id")
        writer.string(id)
        writer.key("pk")
        writer.integer(pk)
        writer.key("change")
        writer.string(change.type.description)
        writer.key("properties")
        writer.beginArray()
        for property in change.type == .update ? (change.properties ?? []) : [] { writer.string(property) }
        writer.endArray()
        if let values {
            writer.key("values")
            writer.beginObject()
            for (name, value) in values.sorted(by: { $0.key < $1.key }) {
                writer.key(named: name)
                value.write(&writer)
            }
            writer.endObject()
            if let asOf {
                writer.key("asOf")
                writer.integer(asOf)
            }
            if !before.isEmpty {
                writer.key("before")
                writer.beginObject()
                for (name, value) in before.sorted(by: { $0.key < $1.key }) {
                    writer.key(named: name)
                    value.write(&writer)
                }
                writer.endObject()
            }
        }
        writer.endObject()
        return writer.takeLine()
    }

    /// Plain JSON for a value: numbers, ISO-8601 dates, UUID text, base64 bytes.
    static func write(_ value: AttributeValue, _ writer: inout JSONWriter) {
        switch value {
        case .null: writer.null()
        case .integer(let number): writer.integer(number)
        case .boolean(let flag): writer.bool(flag)
        case .double(let number): writer.number(number)
        case .decimal(let text), .string(let text), .uri(let text): writer.string(text)
        case .date(let seconds): writer.string(ReferenceDate.iso8601(secondsSince2001: seconds))
        case .uuid: writer.string(value.uuidString)
        case .binary(let bytes), .transformable(let bytes), .externalReference(let bytes):
            writer.string(Base64.encode(bytes))
        }
    }
}
