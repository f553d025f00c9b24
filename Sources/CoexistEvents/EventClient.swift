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
        /// The server's number for these filters, shared by subscriptions with the same ones (-1: none).
        var filter: Int
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
    /// Queued messages; those before `outputHead` are written, and `outputOffset` bytes of the one at it.
    var output: [WireLine] = []
    var outputHead = 0
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

    /// Queues a message and writes what the socket takes.
    func send(_ bytes: [UInt8]) {
        enqueue(WireLine(bytes))
        flush()
    }

    /// Queues a message without writing: the caller flushes once after a batch.
    func enqueue(_ line: WireLine) {
        guard line.count > 0 else { return }  // nothing to write: it would never leave the queue
        output.append(line)
        queuedEvents += line.events
    }

    /// Writes queued messages, up to 64 per `writev`, until the socket would block.
    func flush() {
        while outputHead < output.count {
            let batch = min(output.count - outputHead, 64)
            let written = withUnsafeTemporaryAllocation(of: iovec.self, capacity: batch) { vectors in
                for index in 0..<batch {
                    let line = output[outputHead + index]
                    let skip = index == 0 ? outputOffset : 0
                    vectors[index] = iovec(
                        iov_base: line.bytes.baseAddress.map { $0 + skip },
                        iov_len: line.count - skip
                    )
                }
                return writev(descriptor, vectors.baseAddress, Int32(batch))
            }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 {
                if written < 0 && errno != EAGAIN { closed = true }
                break
            }
            advance(by: written)
        }
        if outputHead == output.count {
            output.removeAll(keepingCapacity: output.capacity <= 4_096)
            outputHead = 0
            if closing { closed = true }
        } else if outputHead >= 1_024 && outputHead * 2 >= output.count {
            output.removeFirst(outputHead)
            outputHead = 0
        }
    }

    private func advance(by written: Int) {
        var left = written
        while left > 0 {
            let line = output[outputHead]
            let remaining = line.count - outputOffset
            guard left >= remaining else {
                outputOffset += left
                return
            }
            left -= remaining
            if let token = line.token {
                delivered = max(delivered, token)
                queuedEvents -= line.events
            }
            outputHead += 1
            outputOffset = 0
        }
    }

    var wantsToWrite: Bool { outputHead < output.count }

    /// Drops queued events not yet started, keeping a partly written message whole.
    func dropUnsentEvents() {
        var kept: [WireLine] = []
        for (index, line) in output[outputHead...].enumerated()
        where line.token == nil || (index == 0 && outputOffset > 0) {
            kept.append(line)
        }
        output = kept
        outputHead = 0
        queuedEvents = kept.reduce(0) { $0 + $1.events }
    }

    func recordError(limit: Int) {
        errors += 1
        if errors >= limit { closing = true }
    }
}
