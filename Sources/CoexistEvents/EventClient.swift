import CoexistHistory
import CoexistRuntime

#if canImport(Glibc)
import Glibc
#endif

/// One connection to the event socket: its input, its bounded output queue and its subscription.
final class EventClient {
    /// What a subscriber asked for.
    struct Subscription {
        var name: String?
        var entities: Set<String>?
        var sides: Set<Side>?
        var authors: Set<String>?
        var types: Set<ChangeType>?
        var values: Bool
        var mirrors: Bool
        /// The last token whose events are queued (or were filtered out).
        var position: Int64
        /// Whether the backlog is done and events arrive as they are published.
        var live: Bool
    }

    let descriptor: Int32
    let credentials: PeerCredentials?
    var subscription: Subscription?
    var input: [UInt8] = []
    var inputSince: UInt64?
    /// Queued messages with the token of the event they carry (nil for other messages).
    var output: [(token: Int64?, bytes: [UInt8])] = []
    var outputOffset = 0
    var queuedEvents = 0
    /// The last event token completely written to the socket.
    var delivered: Int64 = 0
    var errors = 0
    var closing = false
    var closed = false
    var lastHeartbeat: UInt64

    init(descriptor: Int32, now: UInt64) {
        self.descriptor = descriptor
        credentials = PeerCredentials(descriptor: descriptor)
        lastHeartbeat = now
    }

    deinit { close(descriptor) }

    /// Reads what the socket has; returns complete lines, or nil after `line_too_long`.
    func readLines(limit: Int, now: UInt64) -> [[UInt8]] {
        var lines: [[UInt8]] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        // Read even after a failed write: a peer that closed may have sent requests (acks) first.
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 {
                if errno != EAGAIN && errno != EWOULDBLOCK { closed = true }
                break
            }
            if count == 0 {
                closed = true
                break
            }
            if input.isEmpty { inputSince = now }
            input += buffer[0..<count]
            while let newline = input.firstIndex(of: 0x0A) {
                lines.append(Array(input[..<newline]))
                input.removeSubrange(...newline)
            }
            inputSince = input.isEmpty ? nil : (inputSince ?? now)
            if input.count > limit {
                input.removeAll()
                inputSince = nil
                send(EventError(code: .lineTooLong, message: "a request line is limited to \(limit) bytes").line)
                closing = true
                break
            }
        }
        return lines
    }

    /// Queues a message (an event when `token` is set) and writes what the socket takes.
    func send(_ bytes: [UInt8], token: Int64? = nil) {
        output.append((token, bytes))
        if token != nil { queuedEvents += 1 }
        flush()
    }

    /// Writes queued bytes until the socket would block.
    func flush() {
        while let head = output.first {
            let remaining = head.bytes.count - outputOffset
            let written = head.bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + outputOffset, remaining) }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 {
                if written < 0 && errno != EAGAIN { closed = true }
                return
            }
            outputOffset += written
            if outputOffset == head.bytes.count {
                if let token = head.token {
                    delivered = max(delivered, token)
                    queuedEvents -= 1
                }
                output.removeFirst()
                outputOffset = 0
            }
        }
        if closing { closed = true }
    }

    var wantsToWrite: Bool { !output.isEmpty }

    /// Drops queued events not yet started, keeping a partly written message whole.
    func dropUnsentEvents() {
        let keep = outputOffset > 0 ? 1 : 0
        let kept = Array(output.prefix(keep))
        let rest = output.dropFirst(keep).filter { $0.token == nil }
        output = kept + rest
        queuedEvents = output.filter { $0.token != nil }.count
    }

    func recordError(limit: Int) {
        errors += 1
        if errors >= limit { closing = true }
    }
}
