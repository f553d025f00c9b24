import CoexistBridge
import CoexistEvents
import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistRuntime
import CoexistSQLite

#if canImport(Glibc)
import Glibc
#endif

/// `coexistctl history list|show|stats|replay|export|import|prune` (its interface: HistorySpec.swift).
enum HistoryCommand: Subcommand {
    static let name = "history"
    static let summary = "list, show, count, replay, export, import or prune persistent-history transactions"

    static func run(_ arguments: [String]) throws -> ExitCode {
        let parsed = try Help.parse(self, arguments)
        guard let verb = parsed.positionals.first else {
            throw ArgumentParser.UsageError("missing list, show, stats, replay, export, import or prune")
        }
        if let allowed = verbOptions[verb] { try parsed.requireOnly(allowed, for: "history \(verb)") }
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
            let store = try LegacyStore(path: positionals[1], model: model, modelPath: parsed.option("model"))
            let reader = try HistoryReader(store: store)
            guard var transaction = try reader.transaction(token) else {
                StandardStreams.error("coexistctl history: \(positionals[1]): no transaction \(token)")
                return .dataError
            }
            if parsed.flag("json") {
                StandardStreams.out(try JSONOutput.encode(HistoryTransactionDetail(transaction)))
            } else {
                try HistoryText.name(&transaction, from: store)
                StandardStreams.out(HistoryText.detail(transaction))
            }
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
    /// `token  local time  side  author=…  process=…  +inserts ~updates -deletes`, the token (up to six
    /// digits) and the side padded so that the columns line up (`--json` has the UTC time).
    static func line(_ transaction: HistoryTransaction) -> String {
        let counts = transaction.counts
        return TailFormat.pad("\(transaction.token)", 6, right: true)
            + "  \(localDateTime(secondsSince2001: transaction.timestamp))  "
            + TailFormat.pad("\(transaction.side)", 6)
            + "  author=\(transaction.author ?? "-")  process=\(transaction.processName ?? "-")  "
            + "+\(counts.insert) ~\(counts.update) -\(counts.delete)"
    }

    /// Completes each change's object notation from the bridge's identity map, when the file has one: a
    /// legacy change gets the identity its row shares with the new schema, a new-side change its `Z_PK`
    /// (the notation of `tail`: entity, identity, (Z_PK n)). Reads only.
    static func name(_ transaction: inout HistoryTransaction, from store: LegacyStore) throws {
        let connection = store.connection
        guard try connection.tableExists("coexist_identity") else { return }
        let model = store.model
        for index in transaction.changes.indices {
            let change = transaction.changes[index]
            guard let entity = change.entity else { continue }
            let root = model?.entity(named: entity).map { model?.root(of: $0).name ?? entity } ?? entity
            if change.objectID == nil, let pk = change.objectPK {
                transaction.changes[index].objectID =
                    try connection.scalar(
                        "SELECT id FROM coexist_identity WHERE entity = ? AND pk = ?",
                        [.text(root), .integer(pk)]
                    ).textValue
            } else if change.objectPK == nil, let id = change.objectID {
                transaction.changes[index].objectPK =
                    try connection.scalar(
                        "SELECT pk FROM coexist_identity WHERE entity = ? AND id = ?",
                        [.text(root), .text(id)]
                    ).integerValue
            }
        }
    }

    static func detail(_ transaction: HistoryTransaction) -> String {
        var lines = [
            "token      \(transaction.token)",
            "time       \(localDateTime(secondsSince2001: transaction.timestamp)) local, "
                + ReferenceDate.iso8601(secondsSince2001: transaction.timestamp),
            "author     \(transaction.author ?? "-")",
            "context    \(transaction.contextName ?? "-")",
            "bundle     \(transaction.bundleID ?? "-")",
            "process    \(transaction.processName ?? "-")",
            "changes    \(transaction.changes.count)",
        ]
        for change in transaction.changes {
            // The notation of tail too: entity, the identity when the history names it, (Z_PK n).
            var object = change.entity ?? "entity#\(change.entityNumber ?? 0)"
            if let id = change.objectID { object += " " + id }
            if let pk = change.objectPK { object += " (Z_PK \(pk))" }
            var line = "  \(change.side) \(change.type) \(object)"
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

    /// `2026-12-03 10:21:31+01:00`: the local time with its offset from UTC (so that a time copied into
    /// `--before` or `--after` means the same instant), from a Core Data timestamp (seconds since 2001).
    static func localDateTime(secondsSince2001 seconds: Double) -> String {
        let unix = seconds + 978_307_200
        guard unix.isFinite, abs(unix) < 1e15 else { return ReferenceDate.iso8601(secondsSince2001: seconds) }
        var whole = time_t(unix.rounded(.down))
        var parts = tm()
        guard localtime_r(&whole, &parts) != nil else { return ReferenceDate.iso8601(secondsSince2001: seconds) }
        let offset = Int(parts.tm_gmtoff) / 60
        let sign = offset < 0 ? "-" : "+"
        return TailFormat.pad(parts.tm_year + 1900, 4) + "-" + TailFormat.pad(parts.tm_mon + 1, 2) + "-"
            + TailFormat.pad(parts.tm_mday, 2) + " " + TailFormat.pad(parts.tm_hour, 2) + ":"
            + TailFormat.pad(parts.tm_min, 2) + ":" + TailFormat.pad(parts.tm_sec, 2) + sign
            + TailFormat.pad(Int32(abs(offset) / 60), 2) + ":" + TailFormat.pad(Int32(abs(offset) % 60), 2)
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
