import CoexistBridge
import CoexistConfiguration
import CoexistProtocol
import CoexistRuntime
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Serves the socket while coexistd starts, before the event service exists: once an initial sync is
/// under way, its own thread answers `status` (phase `initial-sync`, progress, ETA) and `ping` at once, so
/// that an operator sees why the daemon is not ready and how far it is. Any other request (`subscribe`,
/// `wait`…, and `status` before a sync has begun) is held, with what follows it on that connection, and
/// handed to the event service when it starts: a client connecting early is served late, never refused.
/// It keeps the event service's rules: the allowlist, `max-line-length`, `request-timeout` for a line
/// begun; it takes at most 64 connections (more wait in the listen backlog, so that a crowd connecting
/// while the daemon starts does not take the descriptors it needs to start). ``finish()`` hands
/// back the listener and the held connections; connections not accepted yet stay queued for the event
/// service. (Unchecked: the listener is used by the
/// responder's thread alone until `finish()` has joined it.)
final class StartupResponder: @unchecked Sendable {
    /// What a `status` reply says.
    struct Progress: Sendable {
        var sync: SyncEngine.InitialSyncProgress?
        var startedAt = Monotonic.now()
        var lastToken: Int64 = 0
    }

    private let listener: UnixListener
    private let limits: EventLimits
    private let stopSignal: WakeSignal
    private let progress = Mutex(Progress())
    private let thread = Mutex<WorkerThread?>(nil)

    /// Starts answering on `listener`.
    init(listener: UnixListener, limits: EventLimits) throws {
        self.listener = listener
        self.limits = limits
        stopSignal = try WakeSignal()
        let worker = try WorkerThread(name: "coexist-startup") { [self] in serve() }
        thread.withLock { $0 = worker }
    }

    /// Records the initial sync's progress, for `status`.
    func update(_ sync: SyncEngine.InitialSyncProgress, lastToken: Int64) {
        progress.withLock {
            $0.sync = sync
            $0.lastToken = lastToken
        }
    }

    /// Stops answering; returns the listener and every connection still open, for the event service.
    func finish() -> (UnixListener, [Held]) {
        stopSignal.signal()
        thread.withLock { $0?.join() }
        return (listener, handedOver.withLock { $0 })
    }

    /// Stops answering and closes every connection (the daemon does not start).
    func abandon() {
        for held in finish().1 { close(held.descriptor) }
    }

    /// The `status` reply now.
    func statusLine() -> [UInt8] {
        let now = Monotonic.now()
        let state = progress.withLock { $0 }
        var fields: [(String, JSONField)] = [("type", "status"), ("phase", "initial-sync")]
        fields.append(("lastToken", .integer(state.lastToken)))
        if let sync = state.sync {
            fields += [
                ("direction", .string(sync.direction)), ("step", .string(sync.phase)), ("entity", .string(sync.entity)),
                ("done", .integer(Int64(sync.done))), ("total", .integer(Int64(sync.total))),
                ("overallDone", .integer(Int64(sync.overallDone))),
                ("overallTotal", .integer(Int64(sync.overallTotal))),
            ]
            let eta = Self.eta(done: sync.overallDone, total: sync.overallTotal, elapsed: now - state.startedAt)
            fields.append(("eta", eta.map { .number($0) } ?? .null))
        }
        return JSONWriter.message(fields: fields)
    }

    /// Seconds left at the rate so far; nil before anything is done.
    static func eta(done: Int, total: Int, elapsed: UInt64) -> Double? {
        guard done > 0, total >= done else { return nil }
        let seconds = Double(elapsed) / 1e9
        return (seconds / Double(done) * Double(total - done) * 10).rounded() / 10
    }

    /// A connection the event service takes over: the request lines held (the first not answered here and
    /// every later one) and the start of a line not complete yet.
    struct Held: Sendable {
        let descriptor: Int32
        let lines: [[UInt8]]
        let partial: [UInt8]
    }

    private final class Connection {
        let descriptor: Int32
        var buffer: [UInt8] = []
        /// Since when `buffer` holds the start of a line.
        var partialSince: UInt64?
        /// Lines held for the event service; once any is, the connection is no longer read here.
        var held: [[UInt8]] = []
        init(_ descriptor: Int32) { self.descriptor = descriptor }
    }

    private let handedOver = Mutex<[Held]>([])

    private func serve() {
        var connections: [Int32: Connection] = [:]
        while true {
            var descriptors = [
                pollfd(fd: stopSignal.descriptor, events: Int16(POLLIN), revents: 0),
                pollfd(fd: listener.descriptor, events: Int16(POLLIN), revents: 0),
            ]
            if connections.count >= Self.maxConnections { descriptors[1].events = 0 }
            descriptors += connections.values.filter { $0.held.isEmpty }.map {
                pollfd(fd: $0.descriptor, events: Int16(POLLIN), revents: 0)
            }
            _ = poll(&descriptors, nfds_t(descriptors.count), 200)
            if descriptors[0].revents != 0 {
                handedOver.withLock { held in
                    held = connections.values.map {
                        Held(descriptor: $0.descriptor, lines: $0.held, partial: $0.buffer)
                    }
                }
                return
            }
            let now = Monotonic.now()
            if descriptors[1].revents != 0 { accept(into: &connections, now: now) }
            for descriptor in descriptors.dropFirst(2) where descriptor.revents != 0 {
                guard let connection = connections[descriptor.fd], read(connection, now: now) else {
                    drop(descriptor.fd, from: &connections)
                    continue
                }
            }
            for (descriptor, connection) in connections where connection.held.isEmpty {
                guard let since = connection.partialSince, now >= since + limits.requestTimeout else { continue }
                send(connection, EventError(code: .requestTimeout, message: "a request line took too long").line)
                drop(descriptor, from: &connections)
            }
        }
    }

    /// Connections taken while starting; more wait in the listen backlog.
    static let maxConnections = 64

    private func accept(into connections: inout [Int32: Connection], now: UInt64) {
        while connections.count < Self.maxConnections, let descriptor = try? listener.accept() {
            let connection = Connection(descriptor)
            if !limits.allowUIDs.isEmpty || !limits.allowGIDs.isEmpty {
                guard let peer = PeerCredentials(descriptor: descriptor),
                    limits.allowUIDs.contains(peer.uid) || limits.allowGIDs.contains(peer.gid)
                else {
                    send(
                        connection,
                        EventError(code: .forbidden, message: "this uid and gid may not use the socket").line
                    )
                    close(descriptor)
                    continue
                }
            }
            connections[descriptor] = connection
        }
    }

    /// Reads what is there and answers each complete line; false when the connection is done with.
    private func read(_ connection: Connection, now: UInt64) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 4_096)
        let count = chunk.withUnsafeMutableBytes { recv(connection.descriptor, $0.baseAddress, $0.count, 0) }
        if count < 0 && (errno == EAGAIN || errno == EINTR) { return true }
        guard count > 0 else { return false }
        connection.buffer += chunk[..<count]
        while let newline = connection.buffer.firstIndex(of: 0x0A) {
            let line = Array(connection.buffer[..<newline])
            connection.buffer.removeSubrange(...newline)
            if !connection.held.isEmpty || !answer(line, on: connection) { connection.held.append(line) }
        }
        connection.partialSince = connection.buffer.isEmpty ? nil : (connection.partialSince ?? now)
        guard connection.buffer.count <= limits.maxLineLength else {
            send(connection, EventError(code: .lineTooLong, message: "a request line is too long").line)
            return false
        }
        return true
    }

    /// Answers a `status` or `ping` line; false for any other (held for the event service, which also
    /// answers lines that do not decode, counting them as the connection's errors).
    private func answer(_ line: [UInt8], on connection: Connection) -> Bool {
        guard case .success(let request) = EventRequest.decode(line), progress.withLock({ $0.sync != nil }) else {
            return false
        }
        switch request.op {
        case "status":
            send(connection, request.id?.tag(statusLine()) ?? statusLine())
            return true
        case "ping":
            let pong = JSONWriter.message(fields: [("type", "pong"), ("token", .integer(0)), ("protocol", 2)])
            send(connection, request.id?.tag(pong) ?? pong)
            return true
        default:
            return false
        }
    }

    /// Writes a reply without blocking; a peer that does not take a small reply loses it.
    private func send(_ connection: Connection, _ line: [UInt8]) {
        var bytes = line
        if bytes.last != 0x0A { bytes.append(0x0A) }
        _ = bytes.withUnsafeBytes {
            Glibc.send(connection.descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
        }
    }

    private func drop(_ descriptor: Int32, from connections: inout [Int32: Connection]) {
        connections[descriptor] = nil
        close(descriptor)
    }
}
