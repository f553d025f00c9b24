import CoexistBridge
import CoexistConfiguration
import CoexistProtocol
import CoexistRuntime

#if canImport(Glibc)
import Glibc
#endif

/// Serves the socket while coexistd starts, before the event service exists (the initial sync may take
/// minutes): its own thread answers `status` (phase `starting`, then `initial-sync` with progress and ETA)
/// and `ping` at once, so that an operator sees why the daemon is not ready and how far it is. Any other
/// request (`subscribe`, `wait`…) is held, with what follows it on that connection, and handed to the event
/// service when it starts: a client connecting early is served late, never refused.
///
/// It keeps the event service's rules, and a few of its own for the wait: the allowlist (refusals logged),
/// `max-line-length`, `request-timeout` for a line begun and for a connection that sends nothing; at most
/// 64 connections (more wait in the listen backlog, so that a crowd connecting while the daemon starts
/// cannot take the descriptors it needs to start); a held connection whose peer hangs up is dropped.
/// ``finish()`` hands back the listener and the held connections; connections not accepted yet stay queued
/// for the event service. (Unchecked `Sendable`: the listener is used by the responder's thread alone until
/// `finish()` has joined it.)
final class StartupResponder: @unchecked Sendable {
    /// What a `status` reply says.
    struct Progress: Sendable {
        var sync: SyncEngine.InitialSyncProgress?
        var lastToken: Int64 = 0
        /// The first progress of this run (a resumed sync counts only what this run does for its ETA).
        var first: (at: UInt64, done: Int)?
    }

    /// A connection the event service takes over: the request lines held (the first not answered here and
    /// every later one) and the start of a line not complete yet.
    struct Held: Sendable {
        let descriptor: Int32
        let lines: [[UInt8]]
        let partial: [UInt8]
    }

    /// `POLLRDHUP` (Linux: the peer closed or shut down writing), which Glibc's module does not export.
    static let peerHungUp: Int16 = 0x2000

    /// Connections taken while starting, at most; more wait in the listen backlog.
    static let maxConnections = 64
    /// Descriptors left to coexistd's start (the database, its WAL, the watcher, the event service…) before
    /// the responder takes a connection.
    static let reserve = 128

    /// Connections this responder takes: at most 64 and `max-clients`, and none that would leave the
    /// daemon's start fewer than ``reserve`` descriptors.
    private let capacity: Int
    /// Of them, those that may hold requests for the event service: the rest stay free for `status`.
    private var holdCapacity: Int { max(0, capacity - 8) }

    private let listener: UnixListener
    private let limits: EventLimits
    private let logger: Logger
    private let stopSignal: WakeSignal
    private let progress = PthreadLocked(Progress())
    private let thread = PthreadLocked<WorkerThread?>(nil)
    private let handedOver = PthreadLocked<[Held]>([])
    /// Connections holding requests (the responder's thread alone uses it).
    private var heldCount = 0

    /// Starts answering on `listener`.
    init(listener: UnixListener, limits: EventLimits, logger: Logger) throws {
        self.listener = listener
        self.limits = limits
        self.logger = logger
        capacity = min(Self.maxConnections, limits.maxClients, max(0, (OpenFilesLimit.headroom() ?? 0) - Self.reserve))
        stopSignal = try WakeSignal()
        let worker = try WorkerThread(name: "coexist-startup") { [self] in serve() }
        thread.withLock { $0 = worker }
    }

    /// Records the initial sync's progress, for `status`.
    func update(_ sync: SyncEngine.InitialSyncProgress, lastToken: Int64) {
        let now = Monotonic.now()
        progress.withLock {
            $0.sync = sync
            $0.lastToken = lastToken
            if $0.first == nil { $0.first = (now, sync.overallDone) }
        }
    }

    /// Stops answering; returns the listener and every connection still open, for the event service.
    /// Calling it again returns no connection.
    func finish() -> (UnixListener, [Held]) {
        stopSignal.signal()
        let running = thread.withLock { thread in
            defer { thread = nil }
            return thread
        }
        running?.join()
        return (
            listener,
            handedOver.withLock { held in
                defer { held = [] }
                return held
            }
        )
    }

    /// Stops answering and closes every connection (the daemon does not start).
    func abandon() {
        for held in finish().1 { close(held.descriptor) }
    }

    /// The `status` reply now.
    func statusLine() -> [UInt8] {
        // The clock read under the lock: `first` is never later than `now`.
        let (state, now) = progress.withLock { ($0, Monotonic.now()) }
        var fields: [(String, JSONField)] = [("type", "status")]
        fields.append(("phase", state.sync == nil ? "starting" : "initial-sync"))
        fields.append(("lastToken", .integer(state.lastToken)))
        if let sync = state.sync {
            fields += [
                ("direction", .string(sync.direction)), ("step", .string(sync.phase)), ("entity", .string(sync.entity)),
                ("done", .integer(Int64(sync.done))), ("total", .integer(Int64(sync.total))),
                ("overallDone", .integer(Int64(sync.overallDone))),
                ("overallTotal", .integer(Int64(sync.overallTotal))),
            ]
            let first = state.first ?? (now, sync.overallDone)
            let eta = Self.eta(
                done: sync.overallDone - first.done,
                left: sync.overallTotal - sync.overallDone,
                elapsed: now - first.at
            )
            fields.append(("eta", eta.map { .number($0) } ?? .null))
        }
        return JSONWriter.message(fields: fields)
    }

    /// Seconds for `left` more steps at the rate of `done` in `elapsed` nanoseconds; nil before any.
    static func eta(done: Int, left: Int, elapsed: UInt64) -> Double? {
        guard done > 0, left >= 0, elapsed > 0 else { return nil }
        let seconds = Double(elapsed) / 1e9
        return (seconds / Double(done) * Double(left) * 10).rounded() / 10
    }

    private final class Connection {
        let descriptor: Int32
        /// When it last sent anything (or was accepted).
        var lastActivity: UInt64
        var buffer: [UInt8] = []
        /// Since when `buffer` holds the start of a line.
        var partialSince: UInt64?
        /// Lines held for the event service; once any is, the connection is only watched for a hang-up.
        var held: [[UInt8]] = []
        /// A reply could not be written whole: the connection is dropped.
        var broken = false
        init(_ descriptor: Int32, now: UInt64) {
            self.descriptor = descriptor
            lastActivity = now
        }
    }

    private func serve() {
        var connections: [Int32: Connection] = [:]
        var acceptPausedUntil: UInt64 = 0
        while true {
            let now = Monotonic.now()
            let accepting = connections.count < capacity && now >= acceptPausedUntil
            var descriptors = [
                pollfd(fd: stopSignal.descriptor, events: Int16(POLLIN), revents: 0),
                pollfd(fd: listener.descriptor, events: accepting ? Int16(POLLIN) : 0, revents: 0),
            ]
            descriptors += connections.values.map {
                // A held connection is not read (its requests wait for the event service): only a hang-up.
                pollfd(fd: $0.descriptor, events: $0.held.isEmpty ? Int16(POLLIN) : Self.peerHungUp, revents: 0)
            }
            _ = poll(&descriptors, nfds_t(descriptors.count), 100)
            if descriptors[0].revents != 0 {
                handedOver.withLock { held in
                    held = connections.values.map {
                        Held(descriptor: $0.descriptor, lines: $0.held, partial: $0.buffer)
                    }
                }
                return
            }
            if descriptors[1].revents & Int16(POLLIN) != 0, !accept(into: &connections, now: now) {
                // Out of descriptors: the pending connection stays in the backlog; look again later.
                acceptPausedUntil = now + 100_000_000
            }
            for descriptor in descriptors.dropFirst(2) where descriptor.revents != 0 {
                guard let connection = connections[descriptor.fd] else { continue }
                let hangUp = Int16(POLLHUP | POLLERR) | Self.peerHungUp
                let hungUp = descriptor.revents & hangUp != 0 && !connection.held.isEmpty
                if hungUp || !read(connection, now: now) || connection.broken {
                    drop(descriptor.fd, from: &connections)
                }
            }
            // A connection that holds nothing is closed once silent for request-timeout (a line begun, or
            // none since the last): the slots are few while coexistd starts.
            for (descriptor, connection) in connections where connection.held.isEmpty {
                guard now >= (connection.partialSince ?? connection.lastActivity) + limits.requestTimeout else {
                    continue
                }
                send(connection, EventError(code: .requestTimeout, message: "no request in time").line)
                drop(descriptor, from: &connections)
            }
        }
    }

    /// Accepts what is pending (up to the limit); false when the process is out of descriptors.
    private func accept(into connections: inout [Int32: Connection], now: UInt64) -> Bool {
        while connections.count < capacity {
            let accepted: Int32?
            do {
                accepted = try listener.accept()
            } catch {
                return false
            }
            guard let descriptor = accepted else { return true }
            let connection = Connection(descriptor, now: now)
            if !limits.allowUIDs.isEmpty || !limits.allowGIDs.isEmpty {
                let peer = PeerCredentials(descriptor: descriptor)
                guard limits.admits(uid: peer?.uid, gid: peer?.gid) else {
                    send(
                        connection,
                        EventError(code: .forbidden, message: "this uid and gid may not use the socket").line
                    )
                    var fields: [LogField: String] = [.event: "refused"]
                    if let peer {
                        fields[.peerUID] = "\(peer.uid)"
                        fields[.peerPID] = "\(peer.pid)"
                    }
                    logger.warning("refused a peer not in the allowlist", fields: fields)
                    close(descriptor)
                    continue
                }
            }
            connections[descriptor] = connection
        }
        return true
    }

    /// Reads what is there and answers each complete line; false when the connection is done with.
    private func read(_ connection: Connection, now: UInt64) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 4_096)
        let count = chunk.withUnsafeMutableBytes { recv(connection.descriptor, $0.baseAddress, $0.count, 0) }
        if count < 0 && (errno == EAGAIN || errno == EINTR) { return true }
        guard count > 0 else { return false }
        connection.lastActivity = now
        connection.buffer += chunk[..<count]
        while let newline = connection.buffer.firstIndex(of: 0x0A) {
            let line = Array(connection.buffer[..<newline])
            connection.buffer.removeSubrange(...newline)
            guard line.count <= limits.maxLineLength else { return tooLong(connection) }
            if !connection.held.isEmpty || !answer(line, on: connection) {
                if connection.held.isEmpty && heldCount >= holdCapacity {
                    send(connection, EventError(code: .tooManyClients, message: "coexistd is starting: try again").line)
                    return false
                }
                if connection.held.isEmpty { heldCount += 1 }
                connection.held.append(line)
            }
        }
        guard connection.buffer.count <= limits.maxLineLength else { return tooLong(connection) }
        connection.partialSince = connection.buffer.isEmpty ? nil : (connection.partialSince ?? now)
        return true
    }

    private func tooLong(_ connection: Connection) -> Bool {
        send(
            connection,
            EventError(code: .lineTooLong, message: "a request line is limited to \(limits.maxLineLength) bytes").line
        )
        return false
    }

    /// Answers a `status` or `ping` line; false for any other (held for the event service, which also
    /// answers lines that do not decode, counting them as the connection's errors).
    private func answer(_ line: [UInt8], on connection: Connection) -> Bool {
        guard case .success(let request) = EventRequest.decode(line) else { return false }
        switch request.op {
        case "status":
            let status = statusLine()
            send(connection, request.id?.tag(status) ?? status)
            return true
        case "ping":
            let token = progress.withLock { $0.lastToken }
            let pong = JSONWriter.message(fields: [("type", "pong"), ("token", .integer(token)), ("protocol", 2)])
            send(connection, request.id?.tag(pong) ?? pong)
            return true
        default:
            return false
        }
    }

    /// Writes a reply without blocking; a peer that does not take a small reply whole is dropped (half a
    /// line would break its framing).
    private func send(_ connection: Connection, _ line: [UInt8]) {
        var bytes = line
        if bytes.last != 0x0A { bytes.append(0x0A) }
        let written = bytes.withUnsafeBytes {
            Glibc.send(connection.descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
        }
        if written != bytes.count { connection.broken = true }
    }

    private func drop(_ descriptor: Int32, from connections: inout [Int32: Connection]) {
        if connections[descriptor]?.held.isEmpty == false { heldCount -= 1 }
        connections[descriptor] = nil
        close(descriptor)
    }
}
