import CoexistBridge
import CoexistHistory
import CoexistLegacyStore
import CoexistRuntime

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

    /// Prints the matching transactions, 500 at a time.
    func run(_ reader: HistoryReader) throws {
        var page = filter
        var remaining = limit
        while remaining > 0 {
            let transactions = try reader.transactions(matching: page, limit: Int(min(remaining, 500)))
            guard let last = transactions.last else { return }
            for transaction in transactions {
                StandardStreams.out(
                    json
                        ? try JSONOutput.encode(HistoryTransactionSummary(transaction), pretty: false)
                        : HistoryText.line(transaction)
                )
            }
            page.since = last.token
            remaining -= Int64(transactions.count)
        }
    }
}
