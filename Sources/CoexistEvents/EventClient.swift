import CoexistHistory
import CoexistProtocol
import CoexistRuntime

#if canImport(Glibc)
import Glibc
#endif

/// The bytes queued for all clients together (each client's share counted, shared event bytes once per
/// client that holds them): what ``EventServer/Limits/totalQueueBytes`` bounds.
final class QueueAccount {
    var bytes = 0
}

/// One connection to the event socket: its input, its bounded output queue and its subscription.
///
/// Every byte it queues (events, replies, heartbeats) is counted in ``queuedBytes`` and in the server's
/// ``QueueAccount``; the server refuses to queue past its budgets.
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
        /// One message per transaction (`"framing":"transaction"`) rather than one per change.
        var transactions = false
        /// The server's number for these filters, shared by subscriptions with the same ones (-1: none).
        var filter: Int
        /// The last token whose events are queued (or were filtered out). A live subscription has everything
        /// up to the server's last published token too, and is not moved for each one
        /// (``EventServer/position(of:)``).
        var position: Int64
        /// Whether the backlog is done and events arrive as they are published.
        var live: Bool
    }

    let descriptor: Int32
    let credentials: PeerCredentials?
    let account: QueueAccount
    /// Where the client notes what the server must look at again.
    let attention: ClientAttention
    var subscription: Subscription? {
        didSet {
            if subscription?.live == false { attention.periodic = true }
            if oldValue?.live != subscription?.live || oldValue?.filter != subscription?.filter
                || oldValue?.values != subscription?.values || oldValue?.mirrors != subscription?.mirrors
            {
                attention.liveChanged = true
            }
        }
    }
    /// A snapshot subscription's rows still to send (``SnapshotReader``); its backlog starts after them.
    var snapshot: SnapshotReader? {
        didSet { if snapshot != nil { attention.periodic = true } }
    }
    /// An `ack` posted and not yet durable: its sequence number and the reply it gets then. Until then the
    /// client's further requests wait (in ``heldLines``, the rest of what was read with it; nothing more is
    /// read), so that replies keep the order of the requests.
    var awaitingAck: (sequence: UInt64, reply: [UInt8])? {
        didSet {
            if (oldValue == nil) != (awaitingAck == nil) { attention.awaitingAcks += awaitingAck == nil ? -1 : 1 }
            noteReadiness()
        }
    }
    var heldLines: [[UInt8]] = []
    /// The start of a request line not yet complete.
    var input: [UInt8] = []
    var inputSince: UInt64? {
        didSet { if inputSince != nil { attention.periodic = true } }
    }
    /// Bytes queued and not yet written (events, replies, heartbeats).
    private(set) var queuedBytes = 0
    /// While closing (an error, a lag, a budget): since when the peer has read nothing of what it was told
    /// (``writtenBytes`` was ``writtenAtCheck`` then); past the request timeout it is closed anyway.
    var closingSince: UInt64?
    var writtenAtCheck = 0
    /// Bytes written to the socket so far.
    private(set) var writtenBytes = 0
    /// A queued message, and the token whose events for this client are all written once it is (the last
    /// message of a transaction for it; nil for the others).
    struct Queued {
        let line: WireLine
        let completes: Int64?
    }

    /// Queued messages; those before `outputHead` are written, and `outputOffset` bytes of the one at it.
    var output: [Queued] = []
    var outputHead = 0
    var outputOffset = 0
    var queuedEvents = 0
    /// After a failed read of its backlog: its backlog is not read again before this (monotonic ns).
    var backlogRetryAt: UInt64 = 0
    /// The last token whose events (those this client takes) are all written to the socket: a transaction's
    /// events sent one per message count once the last of them is written, so that a subscriber cut off in
    /// the middle of one is told to resume before it, never after.
    var delivered: Int64 = 0
    var errors = 0
    var closing = false {
        didSet { if closing { attention.periodic = true } }
    }
    var closed = false {
        didSet { if closed { attention.periodic = true } }
    }
    var lastHeartbeat: UInt64
    /// The server's number for this connection (with the descriptor, the key of its registration).
    var serial: UInt32 = 0
    /// What the connection is registered for in the server's epoll set (`POLLIN`, `POLLOUT`; 0: not
    /// registered).
    var interest: Int16 = 0
    /// The client's place in ``ClientAttention/readiness`` (nil: not noted).
    var readinessSlot: Int?
    /// Whether the server took the connection (a refused one is never registered, and closes once told why).
    private(set) var admitted = false

    init(descriptor: Int32, now: UInt64, account: QueueAccount, attention: ClientAttention) {
        self.descriptor = descriptor
        credentials = PeerCredentials(descriptor: descriptor)
        lastHeartbeat = now
        self.account = account
        self.attention = attention
    }

    deinit {
        account.bytes -= queuedBytes
        if awaitingAck != nil { attention.awaitingAcks -= 1 }
        close(descriptor)
    }

    /// What the connection waits for: reading, unless its ack waits to be durable (the kernel holds what it
    /// sends meanwhile); writing, while it has queued output.
    var wantedInterest: Int16 {
        (awaitingAck == nil ? Int16(POLLIN) : 0) | (wantsToWrite ? Int16(POLLOUT) : 0)
    }

    /// The server took the connection: from now on it is registered for what it waits for.
    func admit() {
        admitted = true
        noteReadiness()
    }

    /// Tells the server when what the connection waits for is no longer what it is registered for.
    func noteReadiness() {
        guard admitted, readinessSlot == nil, wantedInterest != interest else { return }
        attention.noteReadiness(self)
    }

    /// Reads at most `budget` bytes of what the socket has (the rest waits in the kernel: one peer cannot
    /// hold the thread), and returns the complete lines. A line longer than `limit` bytes, newline not
    /// counted, gets `line_too_long` and the connection closes.
    func readLines(limit: Int, now: UInt64, budget: Int = 65_536) -> [[UInt8]] {
        var lines: [[UInt8]] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        var total = 0
        // Read even after a failed write: a peer that closed may have sent requests (acks) first.
        while total < budget {
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
            total += count
            if input.isEmpty { inputSince = now }
            var start = 0
            var tooLong = false
            for index in 0..<count where buffer[index] == 0x0A {
                guard input.count + index - start <= limit else {
                    tooLong = true
                    break
                }
                lines.append(input + buffer[start..<index])
                input.removeAll(keepingCapacity: true)
                start = index + 1
            }
            if !tooLong {
                input += buffer[start..<count]
                tooLong = input.count > limit
            }
            if tooLong {
                input.removeAll()
                inputSince = nil
                send(EventError(code: .lineTooLong, message: "a request line is limited to \(limit) bytes").line)
                closing = true
                break
            }
            inputSince = input.isEmpty ? nil : (inputSince ?? now)
        }
        return lines
    }

    /// Queues a message and writes what the socket takes.
    func send(_ bytes: [UInt8]) {
        enqueue(WireLine(bytes))
        flush()
    }

    /// Queues a message (a whole transaction's events, when it carries any) without writing: the caller
    /// flushes once after a batch.
    func enqueue(_ line: WireLine) { enqueue(line, completes: line.token) }

    /// Queues a message without writing; `completes`: the token whose events for this client are all written
    /// once it is (nil for an event a later message of its transaction follows).
    func enqueue(_ line: WireLine, completes: Int64?) {
        guard line.count > 0 else { return }  // nothing to write: it would never leave the queue
        output.append(Queued(line: line, completes: completes))
        queuedEvents += line.events
        queuedBytes += line.count
        account.bytes += line.count
        noteReadiness()
    }

    /// Writes queued messages, up to 64 per `sendmsg`, until the socket would block. `MSG_NOSIGNAL`: a peer
    /// gone is an error here (the client closes), never a SIGPIPE for whatever process embeds the server.
    func flush() {
        while outputHead < output.count {
            let batch = min(output.count - outputHead, 64)
            let written = withUnsafeTemporaryAllocation(of: iovec.self, capacity: batch) { vectors in
                for index in 0..<batch {
                    let line = output[outputHead + index].line
                    let skip = index == 0 ? outputOffset : 0
                    vectors[index] = iovec(
                        iov_base: line.bytes.baseAddress.map { $0 + skip },
                        iov_len: line.count - skip
                    )
                }
                var message = msghdr()
                message.msg_iov = vectors.baseAddress
                message.msg_iovlen = batch
                return sendmsg(descriptor, &message, Int32(MSG_NOSIGNAL))
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
        noteReadiness()
    }

    private func advance(by written: Int) {
        writtenBytes &+= written
        var left = written
        while left > 0 {
            let queued = output[outputHead]
            let line = queued.line
            let remaining = line.count - outputOffset
            guard left >= remaining else {
                outputOffset += left
                return
            }
            left -= remaining
            queuedBytes -= line.count
            account.bytes -= line.count
            if line.token != nil { queuedEvents -= line.events }
            if let token = queued.completes { delivered = max(delivered, token) }
            outputHead += 1
            outputOffset = 0
        }
    }

    var wantsToWrite: Bool { outputHead < output.count }

    /// Drops queued events not yet started, keeping a partly written message whole; returns the token the
    /// client will have all the events of once what stays is written (a resume point that skips nothing).
    func dropUnsentEvents() -> Int64 {
        keepUnsent { $0.token == nil }
        let partial = outputOffset > 0 ? output.first?.completes : nil
        return max(delivered, partial ?? delivered)
    }

    func recordError(limit: Int) {
        errors += 1
        if errors >= limit { closing = true }
    }

    /// Drops everything queued and not yet started (the connection is closing for being over a budget),
    /// keeping a partly written message whole.
    func dropUnsent() { keepUnsent { _ in false } }

    /// Keeps, of what is queued and not yet started, the messages `keep` accepts (and a partly written one
    /// always); recounts what is queued.
    private func keepUnsent(_ keep: (WireLine) -> Bool) {
        var kept: [Queued] = []
        for (index, queued) in output[outputHead...].enumerated()
        where keep(queued.line) || (index == 0 && outputOffset > 0) {
            kept.append(queued)
        }
        output = kept
        outputHead = 0
        queuedEvents = kept.reduce(0) { $0 + $1.line.events }
        let bytes = kept.reduce(0) { $0 + $1.line.count }
        account.bytes += bytes - queuedBytes
        queuedBytes = bytes
        noteReadiness()
    }
}

extension EventClient {
    /// The journal fields naming this peer, and what happened to it.
    func logFields(event: String) -> [LogField: String] {
        var fields: [LogField: String] = [.event: event]
        if let credentials {
            fields[.peerUID] = "\(credentials.uid)"
            fields[.peerPID] = "\(credentials.pid)"
        }
        return fields
    }
}
