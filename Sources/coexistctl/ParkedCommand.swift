import CoexistBridge
import CoexistConfiguration
import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistRuntime
import CoexistSQLite

/// `coexistctl parked list|retry|drop` and `coexistctl conflicts list`: the bridge's records of what it
/// could not mirror and of the conflicts it resolved.
enum ParkedCommand: Subcommand {
    static let name = "parked"
    static let summary = "list, retry or drop what the bridge could not mirror"
    static let spec = CommandSpec(
        command: "coexistctl parked",
        synopsis: [
            "list [STORE | --database PATH | --config FILE] [--json]",
            "retry [STORE | --database PATH | --config FILE] [--model PATH] [--json]",
            """
            drop [STORE | --database PATH | --config FILE] (--token T | --object SIDE/ENTITY/PK
                                          | --all) [--json]
            """,
        ],
        description: """
            list   each parked transaction (token, side) and object (side, entity, Z_PK) with why and since when
            retry  mirrors what is pending, then every parked item again, as coexistd does on its own when
                   caught up; refused (exit 75) while a coexistd serves the file: it retries them itself
            drop   forgets parked items: the bridge gives up on them (coexistctl verify then shows what
                   differs; history pruning is no longer held back by them)

            retry writes as coexistd does: give it coexistd's --config (author, overrides) when it has one.
            list opens the store read-only. --json prints one JSON object.
            """,
        options: StoreTarget.optionSpecs + [
            StoreTarget.modelSpec("with retry, the model to mirror with: " + StoreTarget.modelHelp),
            .value("token", "T", "with drop: the parked transaction with token T"),
            .value("object", "SIDE/ENTITY/PK", "with drop: the parked object SIDE/ENTITY/PK (legacy/Person/12)"),
            .flag("all", "with drop: every parked transaction and object"),
            .flag("json", "print one JSON object"),
        ]
    )

    static func run(_ arguments: [String]) throws -> ExitCode {
        let parsed = try Help.parse(self, arguments)
        guard let verb = parsed.positionals.first else {
            throw ArgumentParser.UsageError("missing list, retry or drop")
        }
        _ = try parsed.positionals(min: 1, max: 2)
        let target = try StoreTarget(parsed, position: 1)
        let path = target.database
        let json = parsed.flag("json")
        let probe = try LegacyStore(path: path)
        switch verb {
        case "list":
            let items = try BridgeRecords.parked(probe.connection)
            if json {
                StandardStreams.out(try JSONOutput.encode(["parked": items], pretty: false))
            } else {
                StandardStreams.out(
                    items.isEmpty ? "nothing parked in \(path)" : items.map(describe).joined(separator: "\n")
                )
            }
            return .success
        case "retry":
            guard try probe.connection.tableExists("coexist_bridge") else {
                throw BridgeError.notBridged("\(path): the bridge has never run on this store: nothing is parked")
            }
            let before = try BridgeRecords.parked(probe.connection).count
            // The daemon's own lock, settings (author, overrides) and start (an interrupted initial sync).
            let writer = try BridgeWriter(target)
            let engine = writer.engine
            let caughtUp = try engine.catchUp()
            var mirrored = 0
            // Rounds of 64 until one mirrors nothing more (each round is one write transaction).
            for _ in 0..<max(1, before / 64 + 1) {
                let round = try engine.retryParked()
                mirrored += round.mirrored
                if round.mirrored == 0 { break }
            }
            let after = try engine.parkedCount()
            if json {
                StandardStreams.out(
                    try JSONOutput.encode(
                        Retried(pending: caughtUp.handled, parkedBefore: before, mirrored: mirrored, parked: after),
                        pretty: false
                    )
                )
            } else {
                StandardStreams.out(
                    "mirrored \(caughtUp.handled) pending transactions; \(before) parked before, \(after) still parked"
                )
            }
            return after == 0 ? .success : .failure
        case "drop":
            guard try probe.connection.tableExists("coexist_bridge") else {
                throw BridgeError.notBridged("\(path): the bridge has never run on this store: nothing is parked")
            }
            let connection = try Connection(path: path)
            let dropped: Int = try connection.write {
                if parsed.flag("all") {
                    let count = try BridgeRecords.parked(connection).count
                    try connection.execute("DELETE FROM coexist_parked; DELETE FROM coexist_parked_object")
                    return count
                }
                if let token = parsed.option("token") {
                    guard let value = Int64(token) else {
                        throw ArgumentParser.UsageError("--token takes a token, not \"\(token)\"")
                    }
                    return try BridgeRecords.dropParked(connection, token: value) ? 1 : 0
                }
                if let object = parsed.option("object") {
                    let parts = object.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
                    guard parts.count == 3, ["legacy", "new"].contains(parts[0]), let pk = Int64(parts[2]) else {
                        throw ArgumentParser.UsageError(
                            "--object is SIDE/ENTITY/PK (legacy/Person/12), not \"\(object)\""
                        )
                    }
                    return try BridgeRecords.dropParkedObject(connection, side: parts[0], entity: parts[1], pk: pk)
                        ? 1 : 0
                }
                throw ArgumentParser.UsageError("drop needs --token T, --object SIDE/ENTITY/PK or --all")
            }
            if json {
                StandardStreams.out(try JSONOutput.encode(["dropped": dropped], pretty: false))
            } else {
                StandardStreams.out("dropped \(dropped) parked items")
            }
            return dropped > 0 || parsed.flag("all") ? .success : .dataError
        default:
            throw ArgumentParser.UsageError("unknown parked command \"\(verb)\" (list, retry or drop)")
        }
    }

    struct Retried: Encodable {
        var pending: Int
        var parkedBefore: Int
        var mirrored: Int
        var parked: Int
    }

    /// One parked item in the notation of `tail` and `history show` (side, entity, (Z_PK n)), then what
    /// `parked drop --object` takes for it, when it parked (local time) and why.
    static func describe(_ item: BridgeRecords.Parked) -> String {
        let since = HistoryText.localDateTime(secondsSince2001: item.parkedAt)
        guard item.kind != "transaction" else {
            return "transaction \(item.token ?? 0) (\(item.side))  since \(since): \(item.reason)"
        }
        let entity = item.entity ?? "?"
        let pk = item.pk ?? 0
        return
            "\(item.side) \(entity) (Z_PK \(pk))  [--object \(item.side)/\(entity)/\(pk)]  since \(since): \(item.reason)"
    }
}

/// `coexistctl conflicts list`.
enum ConflictsCommand: Subcommand {
    static let name = "conflicts"
    static let summary = "list the conflicts the bridge resolved"
    static let spec = CommandSpec(
        command: "coexistctl conflicts",
        synopsis: ["list STORE [--since TOKEN|TIME] [--limit N] [--json]"],
        description: """
            Each conflict: the object and property both sides changed in transactions neither had seen, the
            winning and losing transaction, and the policy that chose. --since keeps those after a token
            (winning or losing), or detected at or after an ISO-8601 time or an age (2h, 7d). Read-only.
            --json prints one JSON object per line (NDJSON).
            """,
        options: [
            .value(
                "since",
                "TOKEN|TIME",
                "only the conflicts whose winning or losing transaction is after TOKEN, or detected at or after "
                    + "TIME: ISO-8601 (2025-01-01, 2025-01-01T10:30:00Z) or an age back from now (90s, 30m, 2h, 7d, 2w)"
            ),
            .value("limit", "N", "list at most N conflicts, the oldest first"),
            .flag("json", "print one JSON object per conflict, one per line (NDJSON)"),
        ]
    )

    static func run(_ arguments: [String]) throws -> ExitCode {
        let parsed = try Help.parse(self, arguments)
        guard parsed.positionals.first == "list" else {
            throw ArgumentParser.UsageError("the command is conflicts list")
        }
        let path = try parsed.positionals(min: 2, max: 2)[1]
        var sinceToken: Int64 = 0
        var sinceTime: Double?
        if let since = parsed.option("since") {
            if let token = Int64(since), token >= 0 {
                sinceToken = token
            } else {
                sinceTime = try TimeArgument.parse(since, option: "since", now: TransactionWriter.now())
            }
        }
        let limit = try parsed.integer("limit", in: 1...Int.max, default: Int.max)
        let store = try LegacyStore(path: path)
        let conflicts = try BridgeRecords.conflicts(
            store.connection,
            sinceToken: sinceToken,
            sinceTime: sinceTime,
            limit: limit
        )
        for conflict in conflicts {
            if parsed.flag("json") {
                StandardStreams.out(try JSONOutput.encode(conflict, pretty: false))
            } else {
                StandardStreams.out(
                    "\(HistoryText.localDateTime(secondsSince2001: conflict.detectedAt))  "
                        + "\(conflict.entity) \(conflict.objectID) \(conflict.property): "
                        + "\(conflict.winnerSide) \(conflict.winnerToken) won over \(conflict.loserSide) \(conflict.loserToken) (\(conflict.policy))"
                )
            }
        }
        if conflicts.isEmpty && !parsed.flag("json") { StandardStreams.out("no conflicts in \(path)") }
        return .success
    }
}
