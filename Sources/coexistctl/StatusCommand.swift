import CoexistProtocol
import CoexistRuntime
import FoundationEssentials
import Glibc

/// `coexistctl status [--socket PATH | --config FILE | --database FILE] [--json]`.
enum StatusCommand: Subcommand {
    static let name = "status"
    static let summary = "ask coexistd for its cursor, lag, rates and clients (or its start-up progress)"
    static let spec = CommandSpec(
        command: "coexistctl status",
        synopsis: ["[--socket PATH | --config FILE | --database FILE] [--json]"],
        description: """
            Asks coexistd for its status and prints one line: its cursor and the last token (the lag), what it
            has mirrored, the conflicts it resolved, what is parked, its clients and its rate (transactions a
            second), and when it publishes to NATS JetStream, the publish lag (tokens committed and not yet
            acknowledged by the servers). While it starts (its initial sync runs), the progress instead:
            direction, step, entity, share done and the time left at the rate so far.
            """,
        options: SocketTarget.optionSpecs + [.flag("json", "print coexistd's reply as it is: one JSON object")]
    )

    /// coexistd's `status` reply, serving or starting.
    struct Status: Decodable {
        var phase: String?
        var cursor: Int64?, lastToken: Int64?, lag: Int64?
        var clients: Int?, mirrored: Int?, conflicts: Int?, parked: Int?
        var rate: Double?
        var error: String?
        var direction: String?, step: String?, entity: String?
        var done: Int?, total: Int?, overallDone: Int?, overallTotal: Int?
        var eta: Double?
        /// The JetStream publisher's, when coexistd publishes.
        var publishLag: Int64?, publishError: String?
    }

    static func run(_ arguments: [String]) throws -> ExitCode {
        let parsed = try Help.parse(self, arguments)
        _ = try parsed.positionals(min: 0, max: 0)
        let client = try LineClient(path: try SocketTarget.path(parsed), timeout: 2)
        try client.setReadTimeout(seconds: 10)
        try client.send(EventRequest("status").text)
        let reply: String
        switch try Reply.read(client) {
        case .line(let line): reply = line
        case .closed:
            StandardStreams.error("coexistctl status: coexistd closed the connection")
            return .unavailable
        case .timedOut:
            StandardStreams.error("coexistctl status: coexistd did not answer within 10 s")
            return .unavailable
        }
        let message = ServerMessage.decode(reply)
        guard message?.type == "status" else {
            // An error (a peer outside the allowlist, a server over its clients): said, never a status of zeros.
            StandardStreams.error("coexistctl status: \(message?.code ?? "reply"): \(message?.message ?? reply)")
            return message?.code == "forbidden" ? .permissionDenied : .unavailable
        }
        if parsed.flag("json") {
            StandardStreams.out(reply)
        } else {
            StandardStreams.out(text(try JSONDecoder().decode(Status.self, from: Data(reply.utf8))))
        }
        return .success
    }

    /// One line for a terminal.
    static func text(_ status: Status) -> String {
        if status.phase == "starting" { return "starting" }
        if status.phase == "initial-sync" {
            guard let total = status.overallTotal, let done = status.overallDone, let entity = status.entity else {
                return "starting"
            }
            let percent = total > 0 ? done * 100 / total : 0
            var line =
                "starting: initial sync \(status.direction ?? "") \(percent)% (\(status.step ?? "") of \(entity): "
                + "\(Format.count(status.done ?? 0)) of \(Format.count(status.total ?? 0)))"
            if let eta = status.eta { line += ", about \(Format.duration(eta)) left" }
            return line
        }
        let cursor = status.cursor ?? 0
        var line =
            "cursor \(cursor) of \(status.lastToken ?? cursor) (lag \(status.lag ?? 0)), "
            + "\(Format.count(status.mirrored ?? 0)) mirrored, \(status.conflicts ?? 0) conflicts, "
            + "\(status.parked ?? 0) parked, \(status.clients ?? 0) clients, \(Format.rate(status.rate ?? 0)) tx/s"
        if let lag = status.publishLag { line += ", publish lag \(lag)" }
        if let error = status.error { line += "; last error: \(error)" }
        if let error = status.publishError { line += "; publishing: \(error)" }
        return line
    }
}

/// `coexistctl wait TOKEN [--timeout MS]`: returns once the bridge has mirrored everything up to TOKEN.
enum WaitCommand: Subcommand {
    static let name = "wait"
    static let summary = "wait until coexistd has mirrored everything up to a token (read-your-writes)"
    static let spec = CommandSpec(
        command: "coexistctl wait",
        synopsis: ["TOKEN [--timeout MS] [--json] [--socket PATH | --config FILE | --database FILE]"],
        description: """
            Exits 0 once the bridge's cursor has reached TOKEN, 75 (EX_TEMPFAIL) when the timeout passes first.
            A coexistd that is starting takes the request once it serves; coexistctl gives up 2 s after the
            timeout however long that takes.
            """,
        options: [
            .value("timeout", "MS", "how long to wait, in milliseconds: 0 to 600000 (default 10000)"),
            .flag("json", "print coexistd's reply as it is: one JSON object"),
        ]
            + SocketTarget.optionSpecs
    )

    static func run(_ arguments: [String]) throws -> ExitCode {
        let parsed = try Help.parse(self, arguments)
        guard let token = Int64(try parsed.positionals(min: 1, max: 1)[0]), token >= 0 else {
            throw ArgumentParser.UsageError("TOKEN is a non-negative integer")
        }
        let timeout = try parsed.integer("timeout", in: 0...600_000, default: 10_000)
        // A coexistd that is starting may not have bound its socket yet: connecting is retried for up to 10 s.
        let client = try LineClient(path: try SocketTarget.path(parsed), timeout: min(10, Double(timeout) / 1_000 + 2))
        // The server answers within the timeout, but a starting coexistd holds the request until it serves.
        try client.setReadTimeout(seconds: Double(timeout) / 1_000 + 2)
        try client.send(EventRequest("wait", token: token, timeout: timeout).text)
        let reply: String
        switch try Reply.read(client) {
        case .line(let line): reply = line
        case .closed: return .unavailable
        case .timedOut:
            StandardStreams.error(
                "coexistctl wait: token \(token) not mirrored within \(timeout) ms (coexistd is starting)"
            )
            return .temporaryFailure
        }
        let message = ServerMessage.decode(reply)
        let waited = message?.type == "waited"
        if parsed.flag("json") {
            StandardStreams.out(reply)
        } else if waited {
            StandardStreams.out("mirrored through token \(token) (cursor \(message?.cursor ?? token))")
        } else {
            let cursor = message?.cursor.map { " (cursor \($0))" } ?? ""
            StandardStreams.error("coexistctl wait: \(message?.message ?? reply)\(cursor)")
        }
        return waited ? .success : .temporaryFailure
    }
}

/// A reply line, the end of the stream, or nothing within the read timeout.
enum Reply {
    case line(String)
    case closed
    case timedOut

    /// Reads one reply from `client` (whose read timeout is set).
    static func read(_ client: LineClient) throws -> Reply {
        do {
            guard let line = try client.readLine() else { return .closed }
            return .line(line)
        } catch {
            if error.code == EAGAIN || error.code == EWOULDBLOCK { return .timedOut }
            throw error
        }
    }
}

/// Numbers for a terminal.
enum Format {
    /// `1,234,567`.
    static func count(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var grouped = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { grouped.append(",") }
            grouped.append(digit)
        }
        return (value < 0 ? "-" : "") + grouped
    }

    /// A rate with two significant decimals below 10, one below 100, none above: `0.36`, `42.5`, `1,250`.
    static func rate(_ value: Double) -> String {
        guard value.isFinite, value >= 0, value < 1e15 else { return "0" }
        if value >= 100 { return count(Int(value.rounded())) }
        let scale = value >= 10 ? 10.0 : 100.0
        let rounded = (value * scale).rounded() / scale
        return String(rounded)
    }

    /// `45 s`, `3 min 20 s`, `2 h 5 min`.
    static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0, seconds < 1e12 else { return "?" }
        let whole = Int(seconds.rounded())
        if whole < 60 { return "\(whole) s" }
        if whole < 3_600 { return "\(whole / 60) min \(whole % 60) s" }
        return "\(whole / 3_600) h \((whole % 3_600) / 60) min"
    }
}
