import CoexistEvents
import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistRuntime
import CoexistSQLite

/// `coexistctl consumers list|reset|drop`: the durable consumers recorded in a store.
enum ConsumersCommand: Subcommand {
    static let name = "consumers"
    static let summary = "list, reset or drop the durable consumers of a store"
    static let spec = CommandSpec(
        command: "coexistctl consumers",
        synopsis: [
            "list STORE [--json]",
            "reset STORE NAME --to TOKEN|oldest|latest [--json]",
            "drop STORE NAME [--json]",
        ],
        description: """
            A durable consumer subscribes with a name; the store keeps the last token it acknowledged, it
            resumes after it, and history it has not acknowledged is never pruned.

            list   each consumer: name, acknowledged token, when last heard from, and whether the history it
                   needs is still there (pruned past it with --ignore-consumers: it gets token_expired)
            reset  sets NAME's acknowledged token: it is sent again what follows (oldest: from the oldest
                   transaction still kept; latest: only what comes next). A consumer that is connected moves
                   it on again as it acknowledges.
            drop   forgets NAME: it no longer holds history back, and subscribing with it starts afresh

            list opens the store read-only. --json prints one JSON object.
            """,
        options: [
            .value(
                "to",
                "TOKEN|oldest|latest",
                "with reset, required: the token to set; a token after the last one, or one whose following "
                    + "history was pruned, is refused"
            ),
            .flag("json", "print one JSON object"),
        ]
    )

    struct Listed: Encodable {
        var name: String
        var acked: Int64
        var lastSeen: String
        /// False when the history after `acked` was pruned: subscribing with the name fails.
        var resumable: Bool
    }

    static func run(_ arguments: [String]) throws -> ExitCode {
        let parsed = try Help.parse(self, arguments)
        guard let verb = parsed.positionals.first else {
            throw ArgumentParser.UsageError("missing list, reset or drop")
        }
        // --to is reset's alone: given to another verb it is refused, not ignored.
        if verb != "reset" { try parsed.requireOnly(["json"], for: "consumers \(verb)") }
        let json = parsed.flag("json")
        switch verb {
        case "list":
            let path = try parsed.positionals(min: 2, max: 2)[1]
            let store = try LegacyStore(path: path)
            let oldest = store.hasHistory ? try HistoryPruner.oldestToken(store.connection) : nil
            let listed = try ConsumerTable.list(store.connection).map { consumer in
                Listed(
                    name: consumer.name,
                    acked: consumer.acked,
                    lastSeen: ReferenceDate.iso8601(secondsSince2001: consumer.updatedAt),
                    resumable: oldest.map { $0 <= 0 || consumer.acked >= $0 - 1 } ?? true
                )
            }
            if json {
                StandardStreams.out(try JSONOutput.encode(["consumers": listed], pretty: false))
            } else if listed.isEmpty {
                StandardStreams.out("no durable consumers in \(path)")
            } else {
                for consumer in listed {
                    let state = consumer.resumable ? "" : "  history pruned past it: reset it"
                    StandardStreams.out(
                        "\(consumer.name)  acknowledged \(consumer.acked)  last seen \(consumer.lastSeen)\(state)"
                    )
                }
            }
            return .success
        case "reset", "drop":
            let positionals = try parsed.positionals(min: 3, max: 3)
            let (path, name) = (positionals[1], positionals[2])
            // A refused file is left as it was: the store is checked read-only before it is opened to write.
            let probe = try LegacyStore(path: path)
            guard try probe.connection.tableExists("coexist_consumer") else {
                StandardStreams.error("coexistctl consumers: \(path): no durable consumer \"\(name)\"")
                return .dataError
            }
            let connection = try Connection(path: path)
            var token: Int64?
            let done = try connection.write {
                if verb == "drop" { return try ConsumerTable.drop(connection, name: name) }
                let resolved = try target(parsed.option("to"), connection)
                token = resolved
                return try ConsumerTable.reset(connection, name: name, token: resolved, now: TransactionWriter.now())
            }
            guard done else {
                StandardStreams.error("coexistctl consumers: \(path): no durable consumer \"\(name)\"")
                return .dataError
            }
            if json {
                StandardStreams.out(
                    try JSONOutput.encode(Result(name: name, action: verb, acked: token), pretty: false)
                )
            } else {
                StandardStreams.out(token.map { "\(name): acknowledged token now \($0)" } ?? "\(name): dropped")
            }
            return .success
        default:
            throw ArgumentParser.UsageError("unknown consumers command \"\(verb)\" (list, reset or drop)")
        }
    }

    struct Result: Encodable {
        var name: String
        var action: String
        var acked: Int64?
    }

    /// The token `--to` names; refused when the history after it was pruned (the consumer could not resume).
    private static func target(_ text: String?, _ connection: Connection) throws -> Int64 {
        let oldest = try HistoryPruner.oldestToken(connection)
        let last = try connection.scalar("SELECT max(Z_PK) FROM ATRANSACTION").integerValue ?? 0
        switch text {
        case nil: throw ArgumentParser.UsageError("reset needs --to TOKEN, oldest or latest")
        case "oldest":
            guard let oldest else { return last }  // no history kept: only what comes next
            return oldest > 0 ? oldest - 1 : 0
        case "latest": return last
        case let text?:
            guard let token = Int64(text), token >= 0 else {
                throw ArgumentParser.UsageError("--to takes a token, oldest or latest, not \"\(text)\"")
            }
            guard token <= last else {
                throw ArgumentParser.UsageError(
                    "--to \(token) is after the last token (\(last)): the consumer would skip what comes until then"
                )
            }
            if let oldest, oldest > 0, token < oldest - 1 {
                throw ArgumentParser.UsageError(
                    "the history after token \(token) was pruned (the oldest kept is \(oldest)): --to \(oldest - 1) or more"
                )
            }
            return token
        }
    }
}
