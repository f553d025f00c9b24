import CoexistBridge
import CoexistEvents
import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistRuntime
import CoexistSQLite

/// `coexistctl history list|show|prune`.
enum HistoryCommand: Subcommand {
    static let name = "history"
    static let summary = "list, show or prune persistent-history transactions"
    static let usage = """
        usage: coexistctl history list STORE [--since TOKEN] [--limit N] [--model PATH] [--json]
               coexistctl history show STORE TOKEN [--model PATH] [--json]
               coexistctl history prune STORE --before TOKEN [--ignore-consumers]

        list   one line per transaction after TOKEN (default: all): token, time, author, process and
               change counts; with --json, one JSON object per line (NDJSON)
        show   one transaction with every change: entity, object key, type, changed properties (decoded
               from ZCOLUMNS) and, for deletes, the preserved tombstone values
        prune  delete the transactions before TOKEN (with their changes), but never one the bridge has not
               mirrored or a durable consumer has not acknowledged (unless --ignore-consumers)

          --since TOKEN  only transactions with a greater token
          --limit N      at most N transactions
          --model PATH   decode with this model instead of the store's Z_MODELCACHE
          --json         JSON output
        """

    static func run(_ arguments: [String]) throws -> ExitCode {
        let parsed = try ArgumentParser(
            arguments,
            flags: ["json", "ignore-consumers"],
            options: ["since", "limit", "model", "before"]
        )
        guard let verb = parsed.positionals.first else {
            throw ArgumentParser.UsageError("missing list, show or prune")
        }
        let model = try parsed.option("model").map { try XCDataModelReader.read(path: $0) }
        switch verb {
        case "list":
            let path = try parsed.positionals(min: 2, max: 2)[1]
            let since = try integer(parsed.option("since"), name: "since") ?? 0
            let limit = try integer(parsed.option("limit"), name: "limit") ?? Int64.max
            let reader = try HistoryReader(
                store: LegacyStore(path: path, model: model, modelPath: parsed.option("model"))
            )
            try list(reader, since: since, limit: limit, json: parsed.flag("json"))
            return .success
        case "show":
            let positionals = try parsed.positionals(min: 3, max: 3)
            guard let token = try integer(positionals[2], name: "TOKEN") else { return .usage }
            let reader = try HistoryReader(
                store: LegacyStore(path: positionals[1], model: model, modelPath: parsed.option("model"))
            )
            guard let transaction = try reader.transaction(token) else {
                StandardStreams.error("coexistctl history: \(positionals[1]): no transaction \(token)")
                return .dataError
            }
            StandardStreams.out(
                parsed.flag("json")
                    ? try JSONOutput.encode(HistoryTransactionDetail(transaction)) : HistoryText.detail(transaction)
            )
            return .success
        case "prune":
            let path = try parsed.positionals(min: 2, max: 2)[1]
            guard let before = try integer(parsed.option("before"), name: "before") else {
                throw ArgumentParser.UsageError("prune needs --before TOKEN")
            }
            // Refuse anything but a Core Data store with persistent history before opening it for writing,
            // so that a refused file is left exactly as it was.
            let probe = try LegacyStore(path: path, model: model, modelPath: parsed.option("model"))
            guard probe.hasHistory else {
                throw LegacyStoreError.notCoreDataStore(
                    path: path,
                    reason: "no persistent-history tables (ATRANSACTION, ACHANGE)"
                )
            }
            let connection = try Connection(path: path)
            var bound = before - 1
            if try connection.tableExists("coexist_bridge") {
                bound = min(bound, try SyncEngine.pruneBound(connection) ?? 0)
            }
            if !parsed.flag("ignore-consumers"), try connection.tableExists("coexist_consumer") {
                if let needed = try ConsumerTable.lowestNeeded(connection, activeSince: nil).token {
                    bound = min(bound, needed)
                }
            }
            let pruned = try HistoryPruner.prune(connection, upTo: bound)
            let oldest = try HistoryPruner.oldestToken(connection).map(String.init) ?? "none"
            StandardStreams.out("pruned \(pruned) transactions (through token \(bound)); oldest token now \(oldest)")
            return .success
        default:
            throw ArgumentParser.UsageError("unknown history command \"\(verb)\" (list, show or prune)")
        }
    }

    private static func list(_ reader: HistoryReader, since: Int64, limit: Int64, json: Bool) throws {
        var token = since
        var remaining = limit
        while remaining > 0 {
            let page = try reader.transactions(after: token, limit: Int(min(remaining, 500)))
            guard let last = page.last else { return }
            for transaction in page {
                StandardStreams.out(
                    json
                        ? try JSONOutput.encode(HistoryTransactionSummary(transaction), pretty: false)
                        : HistoryText.line(transaction)
                )
            }
            token = last.token
            remaining -= Int64(page.count)
        }
    }

    private static func integer(_ text: String?, name: String) throws -> Int64? {
        guard let text else { return nil }
        guard let value = Int64(text), value >= 0 else {
            throw ArgumentParser.UsageError("\(name) must be a non-negative integer, not \"\(text)\"")
        }
        return value
    }
}

/// Human-readable history lines.
enum HistoryText {
    static func line(_ transaction: HistoryTransaction) -> String {
        let counts = transaction.counts
        return "\(transaction.token)  \(ReferenceDate.iso8601(secondsSince2001: transaction.timestamp))  "
            + "\(transaction.side)  author=\(transaction.author ?? "-")  process=\(transaction.processName ?? "-")  "
            + "+\(counts.insert) ~\(counts.update) -\(counts.delete)"
    }

    static func detail(_ transaction: HistoryTransaction) -> String {
        var lines = [
            "token      \(transaction.token)",
            "time       \(ReferenceDate.iso8601(secondsSince2001: transaction.timestamp))",
            "author     \(transaction.author ?? "-")",
            "context    \(transaction.contextName ?? "-")",
            "bundle     \(transaction.bundleID ?? "-")",
            "process    \(transaction.processName ?? "-")",
            "changes    \(transaction.changes.count)",
        ]
        for change in transaction.changes {
            let object = change.objectID ?? "p\(change.objectPK ?? 0)"
            var line =
                "  \(change.side) \(change.type) \(change.entity ?? "entity#\(change.entityNumber ?? 0)")/\(object)"
            if change.type == .update {
                line += change.properties.map { ": " + $0.joined(separator: ", ") } ?? ": (undecodable ZCOLUMNS)"
            }
            if !change.tombstone.isEmpty {
                let values = change.tombstone.sorted { $0.key < $1.key }.map { "\($0.key)=\(describe($0.value))" }
                line += "  tombstone " + values.joined(separator: ", ")
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }

    static func describe(_ value: AttributeValue) -> String {
        switch value {
        case .null: "nil"
        case .integer(let number): String(number)
        case .boolean(let flag): String(flag)
        case .double(let number): String(number)
        case .decimal(let text): text
        case .date(let seconds): ReferenceDate.iso8601(secondsSince2001: seconds)
        case .string(let text), .uri(let text): "\"\(text)\""
        case .uuid: value.uuidString ?? "?"
        case .binary(let bytes), .transformable(let bytes), .externalReference(let bytes): "<\(bytes.count) bytes>"
        }
    }
}
