import CoexistProtocol
import CoexistPublish
import CoexistRuntime
import FoundationEssentials
import Glibc

/// `coexistctl tail --nats URL`: the changes coexistd published to a JetStream stream, read back by
/// sequence (messages deleted from the stream are passed over), then what is published next, polled every
/// 100 ms. For operators and tests: it reads, never acknowledges or changes anything.
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
        let client: JetStream
        do {
            client = try JetStream(servers: urls, name: "coexistctl", timeout: 5_000)
        } catch {
            StandardStreams.error("coexistctl tail: \(error)")
            return .unavailable
        }
        var sequence: UInt64 = 1
        if let since = parsed.option("since") {
            if since == "now" {
                sequence = try lastSequence(client, stream) + 1
            } else if let token = Int64(since), token >= 0 {
                after = token
            } else {
                throw ArgumentParser.UsageError("--since is a token or now")
            }
        }
        var seen = 0
        while seen < limit {
            let last: UInt64
            do {
                last = try lastSequence(client, stream)
            } catch {
                StandardStreams.error("coexistctl tail: \(error)")
                return .unavailable
            }
            if sequence > last {
                usleep(100_000)
                continue
            }
            // A message deleted from the stream (or expired) is passed over.
            let message = try? client.message(stream, sequence: sequence, headers: ["Coexist-Token"])
            sequence += 1
            guard let message, Int64(message.headers["Coexist-Token"] ?? "") ?? 0 > after else { continue }
            let line = String(decoding: message.data, as: UTF8.self)
            seen += 1
            if json {
                StandardStreams.out(line)
            } else {
                for event in events(line) {
                    if let message = ServerMessage.decode(event),
                        let text = TailFormat.text(message, line: event, values: values)
                    {
                        StandardStreams.out(text)
                    }
                }
            }
        }
        return .success
    }

    private static func lastSequence(_ client: JetStream, _ stream: String) throws -> UInt64 {
        try client.state(of: stream).lastSequence
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
