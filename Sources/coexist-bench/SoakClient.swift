import CoexistProtocol
import CoexistRuntime

#if canImport(Glibc)
import Glibc
#endif

/// One simulated peer of the soak scenario, driven by the scenario's poll loop. Honest kinds (fast, slow,
/// reconnecting) check what they receive: every transaction once, in token order, across their reconnections
/// (each resumes with `since` = the last token it received); the others only try to make coexistd hold
/// memory or time.
final class SoakClient {
    enum Kind: String, CaseIterable {
        /// Reads everything at once.
        case fast
        /// Reads 2 KiB every 100 ms: falls behind, is told it lagged, resumes from its token.
        case slow
        /// Subscribes from the start with values and never reads; replaced every minute.
        case neverReading = "never-reading"
        /// Reads a random number of events, disconnects, resumes from its token under its durable name.
        case reconnecting
        /// Garbage, over-long and partial lines, pipelined waits, extreme tokens, huge filters; reconnects
        /// when closed.
        case hostile
    }

    let kind: Kind
    let number: Int
    let socket: String
    var descriptor: Int32 = -1
    var pending: [UInt8] = []
    /// The token the first subscription started after (nil until subscribed), and the last one received.
    var start: Int64?
    var last: Int64 = 0
    /// Transactions received (one event each in this scenario), out-of-order or repeated ones, lags.
    var received = 0
    var disordered = 0
    var lags = 0
    var connections = 0
    var nextAction: Int64 = 0
    var eventsUntilLeaving = 0
    /// At the end of the run slow clients read at full speed.
    var draining = false

    init(kind: Kind, number: Int, socket: String) {
        self.kind = kind
        self.number = number
        self.socket = socket
    }

    deinit { if descriptor >= 0 { close(descriptor) } }

    var isHonest: Bool { kind == .fast || kind == .slow || kind == .reconnecting }

    /// Whether the loop should poll this client for reading now (a slow one every 100 ms).
    func wantsRead(now: Int64) -> Bool {
        descriptor >= 0 && kind != .neverReading && (kind != .slow || draining || now >= nextRead)
    }

    /// When a slow client reads next.
    var nextRead: Int64 = 0

    /// Connects (again) and sends what this kind sends first.
    func connect(now: Int64) {
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
        pending.removeAll()
        guard let fd = try? LineClient.connect(path: socket) else {
            nextAction = now + 200_000_000
            return
        }
        descriptor = fd
        connections += 1
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        let since = start.map { EventRequest.Since.token(max($0, last)) } ?? .now
        switch kind {
        case .fast, .slow:
            send(EventRequest("subscribe", since: since).text)
        case .reconnecting:
            send(EventRequest("subscribe", since: since, name: "soak-\(number)").text)
            eventsUntilLeaving = Int.random(in: 1...400)
        case .neverReading:
            send(EventRequest("subscribe", since: .token(0), values: true).text)
            nextAction = now + 60_000_000_000
        case .hostile:
            sendHostile(connections)
            nextAction = now + 3_000_000_000  // then it leaves, if the server has not closed it
        }
    }

    private func sendHostile(_ round: Int) {
        switch round % 6 {
        case 0: for _ in 0..<6 { send("garbage {") }
        case 1: sendRaw([UInt8](repeating: 0x61, count: 70_000))
        case 2:
            sendRaw(
                Array(
                    String(repeating: #"{"op":"wait","token":999999999999,"timeout":600000}"# + "\n", count: 2_000).utf8
                )
            )
        case 3:
            send(#"{"op":"subscribe","since":9223372036854775807,"name":"soak-hostile"}"#)
            send(#"{"op":"ack","token":9223372036854775807}"#)
            send(#"{"op":"wait","token":99999999999999999999}"#)
        case 4: sendRaw(Array(#"{"op":"#.utf8))  // and nothing more: the request timeout closes it
        default:
            let authors = (0..<3_000).map { "h\(number)-\(round)-\($0)" }
            send(EventRequest("subscribe", since: .now, authors: authors).text)
        }
    }

    func send(_ line: String) { sendRaw(Array((line + "\n").utf8)) }

    private func sendRaw(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count, descriptor >= 0 {
            let sent = bytes[offset...].withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if sent <= 0 { return }  // full or closed: a hostile peer does not insist
            offset += sent
        }
    }

    /// Periodic work (a never-reading client is replaced, a hostile one reconnects after it was closed).
    func tick(now: Int64) {
        if descriptor < 0 {
            if now >= nextAction { connect(now: now) }
            return
        }
        if (kind == .neverReading || kind == .hostile) && now >= nextAction { connect(now: now) }
    }

    /// Reads what is there (a slow client at most 16 KiB a turn, every 100 ms: about twice what two writers
    /// at 100 one-row transactions a second produce, so it can keep up on average while its queue fills and
    /// empties in bursts; a reader slower than the stream for good can never be complete) and handles the
    /// complete lines.
    func read(now: Int64, buffer: inout [UInt8]) {
        let limit = kind == .slow && !draining ? 16_384 : buffer.count
        if kind == .slow { nextRead = now + 100_000_000 }
        let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, limit) }
        if count < 0 && (errno == EAGAIN || errno == EINTR) { return }
        guard count > 0 else {
            closed(now: now)
            return
        }
        pending += buffer[0..<count]
        var begin = 0
        while let newline = pending[begin...].firstIndex(of: 0x0A) {
            handle(pending[begin..<newline], now: now)
            begin = newline + 1
            if descriptor < 0 { return }
        }
        pending.removeFirst(begin)
    }

    private func closed(now: Int64) {
        close(descriptor)
        descriptor = -1
        // Honest clients resume at once (from their token); hostile ones after a pause.
        nextAction = kind == .hostile ? now + 200_000_000 : now
    }

    private static let eventPrefix = Array(#"{"type":"event","token":"#.utf8)
    private static let subscribedPrefix = Array(#"{"type":"subscribed","since":"#.utf8)
    private static let laggedPrefix = Array(#"{"type":"lagged""#.utf8)

    private func handle(_ line: ArraySlice<UInt8>, now: Int64) {
        guard isHonest else { return }
        if line.starts(with: Self.eventPrefix) {
            let token = Self.number(line.dropFirst(Self.eventPrefix.count))
            if token <= last { disordered += 1 }
            last = max(last, token)
            received += 1
            if kind == .reconnecting {
                eventsUntilLeaving -= 1
                if eventsUntilLeaving <= 0 {
                    send(EventRequest("ack", token: last).text)
                    closed(now: now)
                }
            }
        } else if line.starts(with: Self.subscribedPrefix), start == nil {
            let since = Self.number(line.dropFirst(Self.subscribedPrefix.count))
            start = since
            last = since
        } else if line.starts(with: Self.laggedPrefix) {
            lags += 1
        }
    }

    private static func number(_ bytes: ArraySlice<UInt8>) -> Int64 {
        var value: Int64 = 0
        for byte in bytes {
            guard byte >= 0x30 && byte <= 0x39 else { break }
            value = value &* 10 &+ Int64(byte - 0x30)
        }
        return value
    }
}
