import CoexistHistory
import CoexistModel

/// The values the event service last published of recently changed objects, each exactly as of a token: what
/// gives a legacy update (or a bridge copy) its `before`, which Core Data's history does not record.
///
/// An entry is only ever the object's state as of its token *and still now*: the live path goes over every
/// transaction in token order, and each change to an object either leaves its exact values here (read in
/// the snapshot of its own token, or recorded by a new-schema save) or removes the object's entry (values
/// not read, read later than the change, the object deleted). So the entry's values of the properties an
/// update changes are what they held just before it. Bounded by ``maxObjects`` and ``maxBytes``: the oldest
/// entries go first, and an object not remembered simply gets no `before`.
struct ValueMemory {
    /// Objects remembered at most.
    let maxObjects: Int
    /// Estimated bytes of remembered values at most.
    let maxBytes: Int

    private struct Entry {
        var token: Int64
        var values: [String: EventValue]
        var bytes: Int
    }

    private var entries: [EventSource.ChangedObject: Entry] = [:]
    /// Objects in the order they were last remembered (with that token: an older pair is stale).
    private var order: [(object: EventSource.ChangedObject, token: Int64)] = []
    private var orderStart = 0
    private(set) var bytes = 0

    init(maxObjects: Int = 20_000, maxBytes: Int = 16 << 20) {
        self.maxObjects = maxObjects
        self.maxBytes = maxBytes
    }

    /// How many objects are remembered.
    var count: Int { entries.count }

    /// What `object` held of `names` just before a change at a later token, for the names remembered.
    func before(_ object: EventSource.ChangedObject, _ names: some Sequence<String>) -> [String: EventValue] {
        guard let entry = entries[object] else { return [:] }
        var before: [String: EventValue] = [:]
        for name in names {
            if let value = entry.values[name] { before[name] = value }
        }
        return before
    }

    /// All that is remembered of `object`.
    func values(of object: EventSource.ChangedObject) -> [String: EventValue] { entries[object]?.values ?? [:] }

    /// Records `values`, exactly the object's as of `token`, over what was remembered of it; the
    /// `uncertain` ones (and lists naming a member not known yet) are forgotten instead.
    mutating func remember(
        _ object: EventSource.ChangedObject,
        _ values: [String: EventValue],
        uncertain: Set<String>,
        token: Int64
    ) {
        var entry = entries.removeValue(forKey: object) ?? Entry(token: token, values: [:], bytes: 0)
        bytes -= entry.bytes
        for (name, value) in values {
            if let old = entry.values.removeValue(forKey: name) { entry.bytes -= Self.size(name, old) }
            if uncertain.contains(name) { continue }
            if case .list(let members) = value, members.contains(nil) { continue }
            entry.values[name] = value
            entry.bytes += Self.size(name, value)
        }
        entry.token = token
        guard entry.bytes <= maxBytes / 8 else { return }
        entries[object] = entry
        bytes += entry.bytes
        order.append((object, token))
        evict()
    }

    /// Forgets `object`: a change to it was not (or not exactly) remembered.
    mutating func forget(_ object: EventSource.ChangedObject) {
        guard !entries.isEmpty, let entry = entries.removeValue(forKey: object) else { return }
        bytes -= entry.bytes
    }

    /// Forgets every object `transaction` changed.
    mutating func forget(_ transaction: HistoryTransaction) {
        guard !entries.isEmpty else { return }
        for change in transaction.changes { forget(EventSource.ChangedObject(change)) }
    }

    /// Forgets everything (transactions were passed without being seen).
    mutating func clear() {
        entries = [:]
        order = []
        orderStart = 0
        bytes = 0
    }

    private mutating func evict() {
        while entries.count > maxObjects || bytes > maxBytes, orderStart < order.count {
            let (object, token) = order[orderStart]
            orderStart += 1
            if entries[object]?.token == token { forget(object) }
        }
        // The order keeps stale pairs of objects remembered again or forgotten: dropped once they dominate.
        if orderStart > 1024, orderStart * 2 > order.count {
            order.removeFirst(orderStart)
            orderStart = 0
        }
        if order.count - orderStart > 4 * max(entries.count, 1024) {
            order = order[orderStart...].filter { entries[$0.object]?.token == $0.token }
            orderStart = 0
        }
    }

    /// An estimate of the memory a value takes.
    private static func size(_ name: String, _ value: EventValue) -> Int {
        let overhead = 64 + name.utf8.count
        switch value {
        case .attribute(let attribute):
            switch attribute {
            case .decimal(let text), .string(let text), .uri(let text): return overhead + text.utf8.count
            case .binary(let bytes), .transformable(let bytes), .externalReference(let bytes):
                return overhead + bytes.count
            default: return overhead
            }
        case .list(let identities): return overhead + 48 * identities.count
        case .memberCount: return overhead
        }
    }
}
