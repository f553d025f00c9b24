import CoexistProtocol
import CoexistPublish
import CoexistRuntime
import FoundationEssentials
import Glibc

/// `coexistctl tail --nats URL`: the changes coexistd published to a JetStream stream, read back by
/// sequence from the stream's first (messages deleted from the stream are passed over), then what is
/// published next, polled every 100 ms; exits 69 when the servers or the stream fail. For operators and
/// tests: it reads, never acknowledges or changes anything.
enum NatsTail {
    static func run(servers: String, _ parsed: ArgumentParser) throws -> ExitCode {
        for option in ["name", "entity", "side", "socket", "config", "database"] where parsed.option(option) != nil {
            throw ArgumentParser.UsageError("--\(option) does not go with --nats (the stream holds what was published)")
        }
        for flag in ["follow", "mirrors"] where parsed.flag(flag) {
            throw ArgumentParser.UsageError("--\(flag) does not go with --nats (the stream holds what was published)")
        }
        let urls = servers.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !urls.isEmpty else { throw ArgumentParser.UsageError("--nats needs a server URL") }
        let stream = parsed.option("stream") ?? "coexist"
        let limit = try parsed.integer("count", in: 1...Int.max, default: Int.max)
        let json = parsed.flag("json")
        let values = parsed.flag("values")
        var after: Int64 = -1
        var fromNow = false
        if let since = parsed.option("since") {
            if since == "now" {
                fromNow = true
            } else if let token = Int64(since), token >= 0 {
                after = token
            } else {
                throw ArgumentParser.UsageError("--since is a token or now")
            }
        }
        do {
            return try read(
                JetStream(servers: urls, name: "coexistctl", timeout: 5_000),
                stream: stream,
                after: after,
                fromNow: fromNow,
                limit: limit,
                json: json,
                values: values
            )
        } catch {
            StandardStreams.error("coexistctl tail: \(error)")
            return .unavailable
        }
    }

    /// Prints the stream's messages from its first (or, `fromNow`, after its last) whose token is after
    /// `after`, until `limit` changes are printed.
    private static func read(
        _ client: JetStream,
        stream: String,
        after: Int64,
        fromNow: Bool,
        limit: Int,
        json: Bool,
        values: Bool
    ) throws(PublishError) -> ExitCode {
        let bounds = try client.bounds(of: stream)
        var sequence = fromNow ? bounds.last + 1 : max(1, bounds.first)
        var last = bounds.last
        var seen = 0
        while seen < limit {
            if sequence > last {
                usleep(100_000)
                last = try client.bounds(of: stream).last
                continue
            }
            let message: JetStream.Message
            do {
                message = try client.message(stream, sequence: sequence, headers: ["Coexist-Token"])
            } catch  where error.code == JetStream.noMessageFound {
                // Deleted from the stream (or expired): passed over.
                sequence += 1
                continue
            }
            sequence += 1
            guard Int64(message.headers["Coexist-Token"] ?? "") ?? 0 > after else { continue }
            var line = String(decoding: message.data, as: UTF8.self)
            if line.hasSuffix("\n") { line.removeLast() }
            let events = events(line)
            // A change at a time: --count counts changes, a transaction message's each.
            seen += max(1, events.count)
            if json {
                StandardStreams.out(line)
                continue
            }
            for event in events {
                if let decoded = ServerMessage.decode(event),
                    let text = TailFormat.text(decoded, line: event, values: values)
                {
                    StandardStreams.out(text)
                } else {
                    // Not an event (an "oversize" notice): shown as it is.
                    StandardStreams.out(TailFormat.printable(event))
                }
            }
        }
        return .success
    }

    /// The event lines of a published message: itself, or a transaction's changes (the objects of its
    /// `changes` array, cut from the line as they are).
    static func events(_ line: String) -> [String] {
        let bytes = Array(line.utf8)
        let marker = Array(#""changes":["#.utf8)
        guard line.hasPrefix(#"{"type":"transaction""#),
            let start = (0...max(0, bytes.count - marker.count)).first(where: {
                bytes[$0..<min(bytes.count, $0 + marker.count)].elementsEqual(marker)
            })
        else { return [line] }
        var events: [String] = []
        var depth = 0
        var inString = false
        var escaped = false
        var objectStart = 0
        for index in (start + marker.count)..<bytes.count {
            let byte = bytes[index]
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                if depth == 0 { objectStart = index }
                depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if depth == 0 { return events }  // the end of the changes array
                depth -= 1
                if depth == 0 { events.append(String(decoding: bytes[objectStart...index], as: UTF8.self)) }
            default: break
            }
        }
        return events
    }
}
