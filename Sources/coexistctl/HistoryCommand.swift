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
    static let summary = "list, show, count, replay, export, import or prune persistent-history transactions"
    static let usage = """
        usage: coexistctl history list STORE [filters] [--limit N] [--model PATH] [--json]
               coexistctl history show STORE TOKEN [--model PATH] [--json]
               coexistctl history stats STORE [--days N] [--json]
               coexistctl history replay STORE --from TOKEN [--to TOKEN]
                                         (--events [--values] [--mirrors] | --into legacy|new [--dry-run]
                                          | --to-store OTHER) [--json]
               coexistctl history export STORE [--since TOKEN] [--until TOKEN] [--output FILE]
               coexistctl history import FILE --into STORE
               coexistctl history prune STORE (--before TOKEN|TIME | --older-than AGE) [--dry-run] [--yes]
                                        [--ignore-consumers] [--json]

        list   one line per transaction: token, time, side, author, process and change counts; with
               --json, one JSON object per line (NDJSON). Streams: memory stays flat however long the history.
        show   one transaction with every change: entity, object key, type, changed properties (decoded
               from ZCOLUMNS) and, for deletes, the preserved tombstone values
        stats  transactions and changes in total, per author, per entity and type, per day (the last N days
               with any, default 30); first and last token and time; bytes of the history tables; the
               oldest token the bridge or a durable consumer still needs
        replay --events: the range's transactions (--from and --to included) as the NDJSON events a
               subscriber with since gets, from the event service's encoder (--values: with values;
               --mirrors: the bridge's own mirror transactions too)
               --into SIDE: re-applies every object the range touched, as of now, from the other side into
               SIDE through the mirror code, recorded as the bridge's own transaction (a repair after a
               divergence, a restored backup or a hand edit); again, it writes nothing. Refused (exit 75)
               while a coexistd serves the file; --dry-run lists the objects that differ and writes nothing
               --to-store OTHER: replays the range's Core Data transactions, in token order, into OTHER, a
               copy of the store taken earlier (objects keep their Z_PK), one save each with the same
               author; values are the store's as of now (the history holds none); exit 1 when a change
               could not be applied (each named)
        export the transactions as NDJSON, one per line with its changes (tombstone values, and the raw
               columns an import needs), to standard output or a new FILE; read-only
        import an export into the history of STORE, a scratch store of the same model (coexistctl
               create) whose history is empty or older, keeping the tokens, in one transaction: export,
               import, export again gives the same bytes
        prune  delete old transactions (with their changes), but never one the bridge has not mirrored or a
               durable consumer has not acknowledged (unless --ignore-consumers); prints each mark and who
               holds the cut back. On a terminal it asks before deleting, unless --yes.

        filters (list; a transaction is listed when it passes all of them):
          --since TOKEN, --until TOKEN   tokens greater than / at most TOKEN
          --after TIME, --before TIME    saved at or after / before TIME: ISO-8601 (2025-01-01,
                                         2025-01-01T10:30:00Z) or an age back from now (90s, 30m, 2h, 7d, 2w)
          --author NAME                  the transaction's author
          --entity NAME                  a change to this entity or one of its sub-entities
          --type insert|update|delete    a change of this type (with --entity: to that entity)
          --side legacy|new              saved by the Core Data side or the new schema's side
          --limit N                      at most N transactions

        prune:
          --before TOKEN      the transactions before TOKEN (or, given a time, saved before it)
          --older-than AGE    the transactions saved longer ago than AGE (30d), or before an ISO-8601 time
          --dry-run           print the marks and what would go; opens the store read-only
          --yes               do not ask
          --ignore-consumers  prune past durable consumers (they get token_expired; see coexistctl consumers)

          --model PATH   decode with this model instead of the store's Z_MODELCACHE
          --json         JSON output
        """

    static func run(_ arguments: [String]) throws -> ExitCode {
        let parsed = try ArgumentParser(
            arguments,
            flags: ["json", "ignore-consumers", "dry-run", "yes", "events", "values", "mirrors"],
            options: [
                "since", "until", "after", "before", "author", "entity", "type", "side", "limit", "model", "older-than",
                "days", "from", "to", "into", "database", "config", "output", "to-store",
            ]
        )
        guard let verb = parsed.positionals.first else {
            throw ArgumentParser.UsageError("missing list, show, stats, replay, export, import or prune")
        }
        let model = try parsed.option("model").map { try XCDataModelReader.read(path: $0) }
        switch verb {
        case "list":
            let path = try parsed.positionals(min: 2, max: 2)[1]
            let store = try LegacyStore(path: path, model: model, modelPath: parsed.option("model"))
            try HistoryListing(parsed, store: store).run(HistoryReader(store: store), connection: store.connection)
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
        case "stats":
            let path = try parsed.positionals(min: 2, max: 2)[1]
            let store = try LegacyStore(path: path, model: model, modelPath: parsed.option("model"))
            let days = try parsed.integer("days", in: 0...100_000, default: 30)
            try HistoryStatsReport(store: store, days: days).print(json: parsed.flag("json"))
            return .success
        case "prune":
            return try HistoryPruneCommand(parsed).run(model: model)
        case "export":
            let path = try parsed.positionals(min: 2, max: 2)[1]
            let store = try LegacyStore(path: path, model: model, modelPath: parsed.option("model"))
            return try HistoryArchiveCommands.export(
                store,
                since: try integer(parsed.option("since"), name: "--since") ?? 0,
                until: try integer(parsed.option("until"), name: "--until") ?? .max,
                output: parsed.option("output")
            )
        case "import":
            let file = try parsed.positionals(min: 2, max: 2)[1]
            guard let store = parsed.option("into") else {
                throw ArgumentParser.UsageError("import needs --into STORE")
            }
            return try HistoryArchiveCommands.import(file, into: store)
        case "replay":
            _ = try parsed.positionals(min: 1, max: 2)
            let replay = try HistoryReplay(parsed, target: StoreTarget(parsed, position: 1))
            switch (parsed.flag("events"), parsed.option("into"), parsed.option("to-store")) {
            case (false, nil, let other?):
                return try replay.toStore(other, json: parsed.flag("json"))
            case (true, nil, nil):
                try replay.events(values: parsed.flag("values"), mirrors: parsed.flag("mirrors"))
                return .success
            case (false, let into?, nil):
                guard let side = Side(rawValue: into) else {
                    throw ArgumentParser.UsageError("--into is legacy or new, not \"\(into)\"")
                }
                return try replay.into(side, dryRun: parsed.flag("dry-run"), json: parsed.flag("json"))
            default:
                throw ArgumentParser.UsageError("replay needs one of --events, --into SIDE and --to-store OTHER")
            }
        default:
            throw ArgumentParser.UsageError(
                "unknown history command \"\(verb)\" (list, show, stats, replay, export, import or prune)"
            )
        }
    }

    static func integer(_ text: String?, name: String) throws -> Int64? {
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
