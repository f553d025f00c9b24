import CoexistBridge
import CoexistHistory
import CoexistLegacyStore
import CoexistRuntime
import CoexistSQLite

/// `coexistctl history list`: the filters of the command line as a ``HistoryFilter``, and the listing,
/// page by page (flat memory over any number of transactions).
struct HistoryListing {
    let filter: HistoryFilter
    let limit: Int64
    let json: Bool

    init(_ parsed: ArgumentParser, store: LegacyStore) throws {
        var filter = HistoryFilter()
        filter.since = try HistoryCommand.integer(parsed.option("since"), name: "--since") ?? 0
        filter.until = try HistoryCommand.integer(parsed.option("until"), name: "--until") ?? .max
        let now = TransactionWriter.now()
        filter.after = try parsed.option("after").map { try TimeArgument.parse($0, option: "after", now: now) }
        filter.before = try parsed.option("before").map { try TimeArgument.parse($0, option: "before", now: now) }
        filter.author = parsed.option("author")
        if let name = parsed.option("entity") { filter.entity = try Self.entities(named: name, in: store) }
        if let type = parsed.option("type") {
            guard let changeType = ChangeType.allCases.first(where: { $0.description == type }) else {
                throw ArgumentParser.UsageError("--type is insert, update or delete, not \"\(type)\"")
            }
            filter.types = [changeType]
        }
        if let side = parsed.option("side") {
            guard let value = Side(rawValue: side) else {
                throw ArgumentParser.UsageError("--side is legacy or new, not \"\(side)\"")
            }
            filter.side = value
        }
        self.filter = filter
        limit = try HistoryCommand.integer(parsed.option("limit"), name: "--limit") ?? .max
        json = parsed.flag("json")
    }

    /// The entity `name` and its sub-entities, as numbers (from `Z_PRIMARYKEY`) and names.
    static func entities(named name: String, in store: LegacyStore) throws -> HistoryFilter.Entities {
        let rows = store.primaryKeys.filter { !PrimaryKeyRow.historyNumbers.contains($0.number) }
        guard let root = rows.first(where: { $0.name == name }) else {
            throw ArgumentParser.UsageError(
                "no entity \"\(name)\" in \(store.path) (entities: \(rows.map(\.name).joined(separator: ", ")))"
            )
        }
        var selected = [root]
        var index = 0
        while index < selected.count {
            let parent = selected[index].number
            selected += rows.filter { $0.superNumber == parent && !selected.contains($0) }
            index += 1
        }
        return HistoryFilter.Entities(numbers: selected.map(\.number), names: selected.map(\.name))
    }

    /// Prints the matching transactions, at most 500 and about 20,000 changes at a time (a page never
    /// holds more than one transaction beyond that), each page read from one snapshot.
    func run(_ reader: HistoryReader, connection: Connection) throws {
        var since = filter.since
        var remaining = limit
        // The end of the current stretch of about `pageChanges` changes (found once per stretch, so that
        // finding it costs one pass over the change index in all).
        var stretchEnd: Int64?
        while remaining > 0 && since < filter.until {
            var page = filter
            page.since = since
            let printed: Int64? = try connection.read {
                if stretchEnd.map({ since >= $0 }) ?? true {
                    stretchEnd = .max
                    if let bound = try reader.lastToken(after: since, withinChanges: Self.pageChanges) {
                        // At least the next transaction, however many changes it holds.
                        guard let next = try reader.nextToken(after: since) else { return nil }
                        stretchEnd = max(bound, next)
                    }
                }
                page.until = min(filter.until, stretchEnd ?? .max)
                let transactions = try reader.transactions(matching: page, limit: Int(min(remaining, 500)))
                var text = ""
                for transaction in transactions {
                    text +=
                        (json
                            ? try JSONOutput.encode(HistoryTransactionSummary(transaction), pretty: false)
                            : HistoryText.line(transaction)) + "\n"
                }
                if !text.isEmpty { StandardStreams.out(String(text.dropLast())) }
                remaining -= Int64(transactions.count)
                // A full page ends at its last transaction; a short one covered its whole range.
                return transactions.count == Int(min(remaining + Int64(transactions.count), 500))
                    ? transactions.last?.token : page.until
            }
            guard let printed else { return }
            since = printed
        }
    }

    /// About this many changes are read per page.
    static let pageChanges = 20_000
}
