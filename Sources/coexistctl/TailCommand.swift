import CoexistProtocol
import CoexistRuntime
import FoundationEssentials
import Glibc

/// `coexistctl tail [--since T|now] [--entity E]... [--side S] [--mirrors] [--values] [--name N] [--count N]
/// [--follow] [--json]`: prints change events as they happen.
enum TailCommand: Subcommand {
    static let name = "tail"
    static let summary = "print change events as they happen (optionally from a past token)"
    static let spec = CommandSpec(
        command: "coexistctl tail",
        synopsis: [
            """
            [--since TOKEN|now] [--entity NAME]... [--side legacy|new] [--mirrors] [--values]
                                   [--name CONSUMER] [--count N] [--follow] [--json]
                                   [--socket PATH | --config FILE | --database FILE]
            """,
            "--nats URL[,URL]... [--stream NAME] [--since TOKEN|now] [--values] [--count N] [--json]",
        ],
        description: """
            Subscribes to coexistd's events and prints one line per change: readable by default (local time,
            token, side (* for the bridge's mirrors), author, change, object as entity, identity and (Z_PK),
            properties, and with --values the values), the protocol's JSON with --json. --name makes a durable
            consumer whose position is acknowledged as it goes. --count stops after N events (exit 0). When
            coexistd stops or goes away first, tail exits 69 (said on stderr), or with --follow reconnects and
            goes on after the last change it printed. With --nats, tail reads what coexistd published to that
            NATS JetStream stream instead (its [publish] section), in stream order, and goes on with what is
            published next.
            """,
        options: [
            .value(
                "since",
                "TOKEN|now",
                "start after TOKEN: the changes since then from the history, then live ones; now: only what is "
                    + "committed from now on"
            ),
            .repeatable("entity", "NAME", "only changes to the entity NAME; repeatable, for several entities"),
            .value("side", "legacy|new", "only changes saved by the Core Data side (legacy) or the new schema's side"),
            .flag("mirrors", "the bridge's own mirror transactions too (left out by default)"),
            .flag(
                "values",
                "each event with its values: every attribute and relationship of an insert, the changed ones of an "
                    + "update, a delete's tombstone"
            ),
            .value(
                "name",
                "CONSUMER",
                "subscribe as the durable consumer CONSUMER: without --since it resumes after its acknowledged "
                    + "token, and each event printed is acknowledged"
            ),
            .value("count", "N", "stop after N events"),
            .flag(
                "follow",
                "when coexistd stops or goes away, reconnect (every second until it answers) and go on after the "
                    + "last change printed, none twice"
            ),
            .flag("json", "print the protocol's JSON lines as they come"),
            .value(
                "nats",
                "URL[,URL]...",
                "read the changes coexistd published to NATS JetStream from these servers, not the socket"
            ),
            .value("stream", "NAME", "with --nats: the stream (default coexist)"),
        ] + SocketTarget.optionSpecs
    )

    static func run(_ arguments: [String]) throws -> ExitCode {
        let parsed = try Help.parse(self, arguments)
        _ = try parsed.positionals(min: 0, max: 0)
        if let servers = parsed.option("nats") { return try NatsTail.run(servers: servers, parsed) }
        if parsed.option("stream") != nil { throw ArgumentParser.UsageError("--stream goes with --nats") }
        var request = EventRequest("subscribe")
        if let since = parsed.option("since") {
            if since == "now" {
                request.since = .now
            } else if let token = Int64(since), token >= 0 {
                request.since = .token(token)
            } else {
                throw ArgumentParser.UsageError("--since is a token or now")
            }
        }
        let entities = parsed.values("entity")
        if !entities.isEmpty { request.entities = entities }
        if let side = parsed.option("side") {
            guard side == "legacy" || side == "new" else {
                throw ArgumentParser.UsageError("--side is legacy or new, not \"\(side)\"")
            }
            request.sides = [side]
        }
        if parsed.flag("mirrors") { request.mirrors = true }
        if parsed.flag("values") { request.values = true }
        if let name = parsed.option("name") {
            guard !name.isEmpty else { throw ArgumentParser.UsageError("--name needs a consumer name") }
            request.name = name
        }
        var tail = Stream(
            request: request,
            limit: try parsed.integer("count", in: 1...Int.max, default: Int.max),
            json: parsed.flag("json"),
            values: parsed.flag("values")
        )
        let path = try SocketTarget.path(parsed)
        guard parsed.flag("follow") else {
            let client = try LineClient(path: path, timeout: 2)
            return try tail.read(client)
        }
        var announced = false
        while true {
            if let client = try? LineClient(path: path, timeout: 2) {
                if announced { StandardStreams.error("coexistctl tail: reconnected") }
                announced = false
                // A connection that breaks (coexistd killed) is one more disconnection to follow through.
                if let code = try? tail.read(client), code == .success || tail.fatal { return code }
                if tail.fatal { return .unavailable }
            }
            if !announced { StandardStreams.error("coexistctl tail: coexistd went away; reconnecting") }
            announced = true
            sleep(1)
        }
    }

    /// One tail across connections: what was printed, so that a reconnection goes on after it, none twice.
    struct Stream {
        var request: EventRequest
        let limit: Int
        let json: Bool
        let values: Bool
        var seen = 0
        /// The last event printed: its transaction's token and its place in it.
        var last: (token: Int64, index: Int)?
        /// Where a new connection starts (after this token): the first subscription's position, then the
        /// last transaction printed whole (the one printed in part is sent again, its printed events skipped).
        var resume: Int64?
        /// A durable consumer's transaction whose events are printed but not all known to be: acknowledged
        /// once a later transaction's event arrives (an ack means the whole transaction is taken).
        var pendingAck: Int64?
        var connections = 0
        /// An error a reconnection cannot mend (a bad filter, a refused peer, pruned history).
        var fatal = false

        /// Reads events from `client` until the count is reached (0) or the stream ends (69).
        mutating func read(_ client: LineClient) throws -> ExitCode {
            var subscribe = request
            if connections > 0 {
                // A durable consumer resumes after its acknowledged token by itself.
                if request.name != nil {
                    subscribe.since = nil
                } else if let resume {
                    subscribe.since = .token(resume)
                }
            }
            connections += 1
            try client.send(subscribe.text)
            while seen < limit, let line = try client.readLine() {
                guard let message = ServerMessage.decode(line) else { continue }
                if message.type == "subscribed", resume == nil {
                    struct Subscribed: Decodable { var since: Int64? }
                    resume = (try? JSONDecoder().decode(Subscribed.self, from: Data(line.utf8)))?.since
                }
                if message.type == "event", let token = message.token {
                    let index = message.index ?? 0
                    if let last, (token, index) <= (last.token, last.index) { continue }
                    seen += 1
                    last = (token, index)
                    let whole = message.count.map { index + 1 >= $0 } ?? true
                    resume = max(resume ?? 0, whole ? token : token - 1)
                    if request.name != nil {
                        if let pending = pendingAck, pending < token {
                            try client.send(EventRequest("ack", token: pending).text)
                        }
                        pendingAck = whole ? nil : token
                        if whole { try client.send(EventRequest("ack", token: token).text) }
                    }
                }
                if json {
                    StandardStreams.out(line)
                } else if let text = TailFormat.text(message, line: line, values: values) {
                    if message.type == "error" || message.type == "lagged" {
                        StandardStreams.error(text)
                    } else {
                        StandardStreams.out(text)
                    }
                }
                switch message.type {
                case "shutdown":
                    StandardStreams.error("coexistctl tail: coexistd stopped")
                    return .unavailable
                case "lagged":
                    return .unavailable
                case "error":
                    // A server full of clients may take this one later; anything else stays wrong.
                    fatal = message.code != "too_many_clients"
                    return message.code == "forbidden" ? .permissionDenied : .unavailable
                default:
                    break
                }
            }
            guard seen >= limit else {
                // The stream ended without a shutdown message: coexistd went away (or never answered).
                StandardStreams.error("coexistctl tail: coexistd closed the connection")
                return .unavailable
            }
            return .success
        }
    }
}
