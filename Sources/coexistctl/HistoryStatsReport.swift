import CoexistBridge
import CoexistEvents
import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistRuntime

/// `coexistctl history stats`: ``HistoryStatistics`` with the marks that keep history from being pruned.
struct HistoryStatsReport: Encodable {
    var store: String
    var history: HistoryStatistics
    /// The bridge's bound (its cursor, or before its oldest parked transaction); nil when never bridged.
    var bridge: Int64?
    var consumers: [ConsumerTable.Consumer]
    /// The oldest token someone still needs: the lowest mark, nil when nobody holds history back.
    var oldestNeeded: Int64?

    init(store: LegacyStore, days: Int) throws {
        guard store.hasHistory else {
            throw LegacyStoreError.notCoreDataStore(
                path: store.path,
                reason: "no persistent-history tables (ATRANSACTION, ACHANGE)"
            )
        }
        self.store = store.path
        let names = Dictionary(store.primaryKeys.map { ($0.number, $0.name) }, uniquingKeysWith: { first, _ in first })
        history = try HistoryStatistics(store.connection, names: names, days: days)
        bridge = try HistoryHolds.bridge(store.connection)
        consumers = try ConsumerTable.list(store.connection)
        let marks = consumers.map(\.acked) + (bridge.map { [$0] } ?? [])
        // A mark is the last token handled: the next one is still needed.
        oldestNeeded = marks.min().flatMap { $0 < .max ? $0 + 1 : nil }
    }

    func print(json: Bool) throws {
        if json {
            StandardStreams.out(try JSONOutput.encode(self, pretty: false))
            return
        }
        let time = { (seconds: Double?) in seconds.map { ReferenceDate.iso8601(secondsSince2001: $0) } ?? "-" }
        var lines = [
            "\(history.transactions) transactions, \(history.changes) changes",
            "tokens      \(history.firstToken.map(String.init) ?? "-") … \(history.lastToken.map(String.init) ?? "-")",
            "time        \(time(history.firstTime)) … \(time(history.lastTime))",
        ]
        if let bridge { lines.append("bridge      mirrored through \(bridge)") }
        for consumer in consumers {
            lines.append(
                "consumer    \(consumer.name): acknowledged \(consumer.acked), last seen \(time(consumer.updatedAt))"
            )
        }
        lines.append("needed      " + (oldestNeeded.map { "from token \($0)" } ?? "nothing holds history back"))
        lines.append("authors:")
        for author in history.authors {
            lines.append("  \(author.author ?? "-")  \(author.transactions) transactions, \(author.changes) changes")
        }
        lines.append("changes:")
        for entity in history.entities {
            lines.append("  \(entity.side) \(entity.entity) \(entity.type)  \(entity.changes)")
        }
        lines.append("days:")
        for day in history.days {
            lines.append("  \(day.day)  \(day.transactions) transactions, \(day.changes) changes")
        }
        if let bytes = history.bytes {
            lines.append("bytes:")
            for (name, size) in bytes.sorted(by: { $0.key < $1.key }) { lines.append("  \(name)  \(size)") }
        }
        StandardStreams.out(lines.joined(separator: "\n"))
    }
}
