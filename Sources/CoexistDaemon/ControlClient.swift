import CoexistRuntime
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// One connection to the daemon's socket: newline-delimited JSON requests in, JSON lines out.
///
/// Requests are objects with an `"op"`; this build answers `ping` and `status`. A line longer than the
/// limit, invalid UTF-8 or JSON, or an unknown op gets an `error` message with a stable `code`; after
/// repeated errors the connection is closed. Nothing a peer sends can stop the daemon.
final class ControlClient {
    let descriptor: Int32
    let credentials: PeerCredentials?
    private var input: [UInt8] = []
    private var output: [UInt8] = []
    private(set) var errors = 0
    var closed = false

    static let maximumLineLength = 65_536
    static let maximumErrors = 5
    static let maximumBuffered = 4 << 20

    init(descriptor: Int32) {
        self.descriptor = descriptor
        credentials = PeerCredentials(descriptor: descriptor)
    }

    deinit { close(descriptor) }

    /// Reads what is available; returns complete lines.
    func readLines() -> [[UInt8]] {
        var lines: [[UInt8]] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while !closed {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 || (count < 0 && errno != EAGAIN && errno != EINTR) {
                closed = true
                break
            }
            if count < 0 { break }
            input += buffer[0..<count]
            while let newline = input.firstIndex(of: 0x0A) {
                lines.append(Array(input[..<newline]))
                input.removeSubrange(...newline)
            }
            if input.count > Self.maximumLineLength {
                input.removeAll()
                send([
                    "type": "error", "code": "line_too_long",
                    "message": .string("a request line is limited to \(Self.maximumLineLength) bytes"),
                ])
                closed = true
            }
        }
        return lines
    }

    /// Queues one JSON object and writes as much as the socket takes.
    func send(_ object: [String: JSONValue]) {
        guard let data = try? JSONEncoder().encode(object) else { return }
        output += Array(data) + [0x0A]
        guard output.count <= Self.maximumBuffered else {
            closed = true
            return
        }
        flush()
    }

    func flush() {
        while !output.isEmpty {
            let written = output.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 {
                if errno != EAGAIN { closed = true }
                return
            }
            output.removeFirst(written)
        }
    }

    var wantsToWrite: Bool { !output.isEmpty }

    func recordError() {
        errors += 1
        if errors >= Self.maximumErrors { closed = true }
    }
}

/// A JSON value for server messages.
enum JSONValue: Encodable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral {
    case string(String)
    case integer(Int64)
    case double(Double)
    case bool(Bool)
    case null

    init(stringLiteral value: String) { self = .string(value) }
    init(integerLiteral value: Int64) { self = .integer(value) }
    init(booleanLiteral value: Bool) { self = .bool(value) }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let text): try container.encode(text)
        case .integer(let number): try container.encode(number)
        case .double(let number): try container.encode(number)
        case .bool(let flag): try container.encode(flag)
        case .null: try container.encodeNil()
        }
    }
}
