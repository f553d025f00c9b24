import CoexistHistory

/// What one mirror writes for the objects of a snapshot (one or more source transactions of one side): each
/// object once, in the order the source first touched it, with every property when the snapshot inserted
/// it and the union of its updates' winning properties otherwise; the deletes apart, done first.
struct MirrorPlan<Key: Hashable> {
    struct Entry {
        /// Whether a change of the snapshot inserted the object: all its properties are mirrored.
        var inserted = false
        /// The updated properties that win (in first-seen order), when not inserted.
        var properties: [String] = []
    }

    private(set) var order: [Key] = []
    private(set) var entries: [Key: Entry] = [:]
    /// The deletes, in source order.
    var deletes: [HistoryChange] = []

    /// Notes an insert of `key`.
    mutating func insert(_ key: Key) {
        if entries[key] == nil { order.append(key) }
        entries[key, default: Entry()].inserted = true
    }

    /// Notes winning updated `properties` of `key` (nothing when none wins).
    mutating func update(_ key: Key, _ properties: [String]) {
        guard !properties.isEmpty else { return }
        if entries[key] == nil { order.append(key) }
        var entry = entries[key, default: Entry()]
        for property in properties where !entry.properties.contains(property) { entry.properties.append(property) }
        entries[key] = entry
    }

    /// The changes of `transactions` in token order, each with its transaction's token.
    static func changes(of transactions: [HistoryTransaction]) -> [(token: Int64, change: HistoryChange)] {
        transactions.flatMap { transaction in transaction.changes.map { (transaction.token, $0) } }
    }
}
