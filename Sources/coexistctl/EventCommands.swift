import CoexistBridge
import CoexistConfiguration
import CoexistProtocol
import CoexistRuntime
import FoundationEssentials

/// The daemon's socket for a command: `--socket PATH`, else the `socket` of `--config FILE`, else the default.
/// A configuration file named is read whole, so that one coexistd would refuse is refused here too (78,
/// file:line), even when `--socket` overrides its socket as it would coexistd's.
enum SocketTarget {
    /// The options that name the daemon: its socket, its configuration file, or the database it serves;
    /// every command that talks to coexistd lists these.
    static let optionSpecs: [OptionSpec] = [
        .value("socket", "PATH", "the Unix socket coexistd listens on (default \(DaemonConfiguration().socket))"),
        .value(
            "config",
            "FILE",
            "the socket of coexistd's configuration file FILE, which is read whole: a file coexistd would refuse "
                + "is refused here too; --socket overrides its socket"
        ),
        .value("database", "FILE", "the coexistd serving FILE, found from the file itself"),
    ]

    /// The daemon's socket from `--socket`, `--config` or `--database`; one of them, or `--socket` with
    /// `--config`.
    static func path(_ parsed: ArgumentParser) throws -> String {
        let given = ["socket", "config", "database"].filter { parsed.option($0) != nil }
        guard given.count <= 1 || given == ["socket", "config"] else {
            throw ArgumentParser.UsageError("give one of --socket, --config, --database")
        }
        if let database = parsed.option("database") { return try ServingDaemon.socket(ofDatabase: database) }
        let configured = try parsed.option("config").map { try DaemonConfiguration.read(file: $0) }
        return parsed.option("socket") ?? configured?.socket ?? DaemonConfiguration().socket
    }
}

/// `coexistctl tail [--since T] [--entity E]... [--json]`: prints change events as they happen.
enum TailCommand: Subcommand {
    static let name = "tail"
    static let summary = "print change events as they happen (optionally from a past token)"
    static let spec = CommandSpec(
        command: "coexistctl tail",
        synopsis: [
            """
            [--since TOKEN|now] [--entity NAME]... [--side legacy|new] [--mirrors] [--values]
                                   [--name CONSUMER] [--count N] [--json] [--socket PATH | --config FILE | --database FILE]
            """
        ],
        description: """
            Subscribes to coexistd's events and prints one line per change: readable by default, the protocol's
            JSON with --json. --name makes a durable consumer whose position is acknowledged as it goes.
            --count stops after N events.
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
            .flag("json", "print the protocol's JSON lines as they come"),
        ] + SocketTarget.optionSpecs
    )

    static func run(_ arguments: [String]) throws -> ExitCode {
        let parsed = try Help.parse(self, arguments)
        _ = try parsed.positionals(min: 0, max: 0)
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
        let limit = try parsed.integer("count", in: 1...Int.max, default: Int.max)
        let client = try LineClient(path: try SocketTarget.path(parsed), timeout: 2)
        try client.send(request.text)
        var seen = 0
        while seen < limit, let line = try client.readLine() {
            let message = ServerMessage.decode(line)
            if message?.type == "event" { seen += 1 }
            if parsed.flag("json") {
                StandardStreams.out(line)
            } else if let message {
                if let text = message.text { StandardStreams.out(text) }
            }
            if message?.type == "error" || message?.type == "lagged" || message?.type == "shutdown" {
                return message?.type == "shutdown" ? .success : .unavailable
            }
            if parsed.option("name") != nil, message?.type == "event", let token = message?.token {
                try client.send(EventRequest("ack", token: token).text)
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

extension ServerMessage {
    /// The line `coexistctl tail` prints for the message (nil for those it does not print).
    var text: String? {
        switch type {
        case "event":
            let object = "\(entity ?? "?")/\(objectID ?? pk.map { "p\($0)" } ?? "?")"
            let changed = (properties ?? []).isEmpty ? "" : " " + (properties ?? []).joined(separator: ", ")
            return
                "\(token ?? 0)  \(side ?? "?")\(mirror == true ? " (mirror)" : "")  \(author ?? "-")  \(change ?? "?") \(object)\(changed)"
        case "end_of_backlog": return "-- live from token \(token ?? 0) --"
        case "error", "lagged": return "\(type): \(code ?? "") \(message ?? "") (token \(token ?? 0))"
        case "shutdown": return "-- coexistd stopped --"
        default: return nil
        }
    }
}
