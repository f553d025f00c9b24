public import CoexistBridge
public import CoexistConfiguration
import CoexistHistory
public import CoexistProtocol
public import CoexistRuntime
import CoexistSQLite

#if canImport(Glibc)
public import Glibc
#endif

/// The change-event server on the daemon's Unix socket (protocol in the README's "Event protocol").
///
/// Driven by the daemon's poll loop on the daemon's thread: ``descriptors(now:)`` to poll (one descriptor,
/// an epoll set of the listener and the clients, whatever their number), ``handle(_:now:)`` for what is ready, ``publish(now:)`` after commits, ``tick(now:)`` for backlogs, waits, timeouts and
/// heartbeats. Every write is non-blocking and every queue bounded: a slow or hostile client can only
/// lose its own connection.
public final class EventServer {
    /// Limits and access control (defined with the configuration that sets them).
    public typealias Limits = EventLimits

    /// The time one tick spends filling backlogs, across all catching-up subscribers.
    static let backlogTickBudget = Duration.milliseconds(5)
    /// After a failed read of a subscriber's backlog, how long before it is read again (ns).
    static let backlogRetryDelay: UInt64 = 50_000_000
    /// A catching-up subscriber is given more of its backlog only while less than this is queued for it:
    /// the backlog is read from the history at the subscriber's pace, never held for it in memory.
    static let backlogHighWater = 256 << 10
    /// Snapshot subscriptions read at once (each holds a connection and a read transaction).
    static let maxSnapshots = 4
    /// How long a snapshot waits for the file's two schemas to agree before giving up (ns).
    static let snapshotAgreementTimeout: UInt64 = 10_000_000_000
    /// All filter sets together hold at most this many bytes of names.
    static let maximumFilterBytes = 64 << 20

    let listener: UnixListener
    private(set) var engine: SyncEngine
    private(set) var source: EventSource
    /// Limits; changeable on reload.
    public var limits: Limits {
        // A reload that narrows who may use the socket closes the connections it no longer admits.
        didSet {
            if limits.allowUIDs != oldValue.allowUIDs || limits.allowGIDs != oldValue.allowGIDs { closeForbidden() }
        }
    }
    let logger: Logger
    /// Extra fields of `status` replies (the daemon's counters).
    public var statusFields: () -> [(String, JSONField)] = { [] }
    /// Runs a `migrate` request (to the version named, nil: the current one) and returns the versions it went
    /// from and to with the reply's other fields; nil: the server does not migrate. It may block: the
    /// event service pauses while the file migrates.
    public var migrate: ((String?) throws -> (from: String, to: String, fields: [(String, JSONField)]))?
    /// The exit code and message a failed `migrate` reports (the daemon's one error table).
    public var describeFailure: (any Error) -> (exitCode: Int32, message: String) = { (70, "\($0)") }
    var clients: [Int32: EventClient] = [:]
    /// The last token whose events live subscribers have been given.
    public internal(set) var published: Int64
    /// The client whose request is being answered, and the request's id (``reply(_:_:)`` echoes it to
    /// that client only).
    var replyingTo: (client: ObjectIdentifier, id: EventRequest.RequestID)?
    var waits = WaitQueue()
    /// The bridge's cursor as last read (waits at or below it are answered at once).
    var knownCursor: Int64 = 0
    /// Filter sets shared by the subscriptions that use them, freed with the last one.
    var filters = FilterSets()
    /// The events of the last published transactions, for backlogs that start among them.
    var recent = RecentEvents()
    /// Where every transaction read goes too, encoded, for the JetStream publisher's thread (nil: none).
    public var feed: EventFeed?
    /// Where durable consumers' positions go: the server reads `coexist_consumer`, never writes it.
    public let consumers: ConsumerOutbox
    /// Bytes queued for all clients.
    let account = QueueAccount()
    /// What the clients note for the server to look at again.
    let attention = ClientAttention()
    /// The live subscribers by filter set: made at the first page published after a subscription changed,
    /// emptied when a client is removed (``remove(_:)``).
    var live = LiveGroups()
    /// When the next heartbeat falls due, as of the last pass over every client (``tick(now:)``).
    var nextHeartbeatDue: UInt64 = 0
    /// When ``tick(now:)`` last went over every client.
    var lastClientPass: UInt64 = 0
    /// The client whose backlog or snapshot the last tick filled last (the next tick starts after it).
    var backlogCursor: Int32 = -1
    /// When accepting failed for want of descriptors: the listener is not polled before this.
    var acceptPausedUntil: UInt64 = 0
    var acceptWarnedAt: UInt64 = 0
    /// The listener and the clients, registered for what each waits for (``syncReadiness(now:)``).
    let readiness: ReadinessSet
    /// What the listener is registered for (0: not registered).
    var listenerInterest: Int16 = 0
    /// Registrations in ``readiness`` (the listener's included).
    var registrations = 0
    /// The serial number of the last client made: with its descriptor, the key of its registration.
    var lastSerial: UInt32 = 0

    /// A server on `listener` for the bridge's database.
    ///
    /// The server only reads its connection (which may be read-only); the positions of durable consumers go
    /// to `consumers`, whose writer records them (the table `coexist_consumer` must exist:
    /// ``ConsumerTable/create(_:)``).
    public init(
        listener: UnixListener,
        engine: SyncEngine,
        limits: Limits,
        logger: Logger,
        consumers: ConsumerOutbox
    ) throws {
        self.listener = listener
        self.engine = engine
        self.limits = limits
        self.logger = logger
        self.consumers = consumers
        source = try EventSource(engine: engine)
        published = try source.lastToken()
        readiness = try ReadinessSet()
        try readiness.add(listener.descriptor, events: Int16(POLLIN), key: Self.listenerKey)
        listenerInterest = Int16(POLLIN)
        registrations = 1
    }

    deinit {
        // Clients noted for the next sync hold the attention that holds them.
        _ = attention.takeReadiness()
    }

    /// Connected clients.
    public var clientCount: Int { clients.count }

    /// What the server holds for its clients: connections, queued bytes, filter sets, pending waits and
    /// registrations for readiness. All five return to zero once every client has gone (the fuzzers check it
    /// after every input).
    public var resourcesHeld: (clients: Int, queuedBytes: Int, filterSets: Int, waits: Int, registrations: Int) {
        (clients.count, account.bytes, filters.count, waits.count, registrations - (listenerInterest != 0 ? 1 : 0))
    }

    /// Answers the `ack`s that are now durable, then goes on with what those clients sent after them.
    func releaseDurableAcks(now: UInt64) {
        let durable = consumers.durable
        for client in clients.values {
            guard let awaiting = client.awaitingAck, awaiting.sequence <= durable else { continue }
            client.awaitingAck = nil
            reply(client, awaiting.reply)
            var remaining = client.heldLines[...]
            client.heldLines = []
            while let line = remaining.first, !client.closing, client.awaitingAck == nil {
                remaining = remaining.dropFirst()
                respond(client, line, now: now)
            }
            client.heldLines = Array(remaining)
        }
    }

    /// Handles a ready descriptor; returns false when it is not the server's.
    @discardableResult
    public func handle(_ descriptor: pollfd, now: UInt64) -> Bool {
        guard descriptor.fd == readiness.descriptor else { return false }
        // Batches of 64 while they come full, at most 1,024 registrations in all: the rest stay ready for the
        // next call (level-triggered), and the daemon's other descriptors get their turn.
        for round in 0..<16 {
            // What the last batch changed is registered first: a registration it made stale (output
            // drained, an ack awaited) is not reported again.
            if round > 0 { syncReadiness(now: now) }
            let batch = readiness.ready()
            for (key, events) in batch {
                if key == Self.listenerKey {
                    accept(now: now)
                    continue
                }
                // A client removed (and its descriptor's number given to a newer one) after the batch was
                // taken is skipped: its serial number no longer matches.
                guard let client = clients[Int32(truncatingIfNeeded: key)], Self.key(of: client) == key else {
                    continue
                }
                serve(client, ready: events, now: now)
            }
            guard batch.count == 64 else { break }
        }
        return true
    }

    /// Writes to and reads from a client its registration reports ready (`events`, as `poll` spells them).
    private func serve(_ client: EventClient, ready events: Int16, now: UInt64) {
        if events & Int16(POLLOUT) != 0 { client.flush() }
        if events & Int16(POLLIN | POLLHUP | POLLERR) != 0 && client.awaitingAck == nil {
            // Nothing more is answered once the connection is closing (after errors, over a budget).
            answer(client.readLines(limit: limits.maxLineLength, now: now), from: client, now: now)
        }
        if client.closing && !client.wantsToWrite { client.closed = true }
        if client.closed { remove(client) }
    }

    /// Answers `lines` in order; those after one whose ack is on its way to the bridge are held for later.
    func answer(_ lines: [[UInt8]], from client: EventClient, now: UInt64) {
        for (index, line) in lines.enumerated() where !client.closing {
            guard client.awaitingAck == nil else {
                client.heldLines = Array(lines[index...])
                break
            }
            respond(client, line, now: now)
        }
    }

    private func accept(now: UInt64) {
        while true {
            let accepted: Int32?
            do {
                accepted = try listener.accept()
            } catch {
                // The connection stays in the backlog and the listener readable: poll it again only later,
                // or this thread would spin.
                acceptPausedUntil = now + 100_000_000
                if now >= acceptWarnedAt + 10_000_000_000 {
                    acceptWarnedAt = now
                    logger.warning(
                        "cannot accept connections (\(error)): \(clients.count) clients connected; "
                            + "retrying every 100 ms (raise LimitNOFILE, or lower max-clients)"
                    )
                }
                return
            }
            guard let descriptor = accepted else { return }
            let client = makeClient(descriptor: descriptor, now: now)
            guard clients.count < limits.maxClients else {
                client.send(
                    EventError(code: .tooManyClients, message: "the server has \(limits.maxClients) clients").line
                )
                logger.warning(
                    "refused a client: \(limits.maxClients) clients connected",
                    fields: client.logFields(event: "refused")
                )
                continue
            }
            guard limits.admits(uid: client.credentials?.uid, gid: client.credentials?.gid) else {
                client.send(EventError(code: .forbidden, message: "this uid and gid may not use the socket").line)
                logger.warning("refused a peer not in the allowlist", fields: client.logFields(event: "refused"))
                continue
            }
            clients[descriptor] = client
            client.admit()
        }
    }

    /// Closes the connections of peers the allowlists no longer admit (after a reload), with `forbidden`.
    func closeForbidden() {
        for client in clients.values
        where !client.closing && !limits.admits(uid: client.credentials?.uid, gid: client.credentials?.gid) {
            client.dropUnsent()
            client.send(EventError(code: .forbidden, message: "this uid and gid may no longer use the socket").line)
            unsubscribe(client)
            client.closing = true
            logger.warning("closed a peer the allowlist no longer holds", fields: client.logFields(event: "refused"))
        }
    }

    /// Forgets a closed client, after reading what it sent last: a peer that closes right after its
    /// requests (acknowledgements) must still have them applied.
    func remove(_ client: EventClient) {
        guard clients[client.descriptor] === client else { return }
        // Requests read while an earlier ack was on its way were accepted: their acks count too.
        var lines = client.heldLines
        client.heldLines = []
        if !client.closing { lines += client.readLines(limit: limits.maxLineLength, now: 0) }
        for line in lines {
            if case .success(let request) = EventRequest.decode(line), request.op == "ack",
                let token = request.token, token >= 0, token <= published, let name = client.subscription?.name
            {
                consumers.post(name: name, token: token, at: TransactionWriter.now())
            }
        }
        unsubscribe(client)
        // The live groups hold their clients: a removed one must not stay open in them until the next
        // commit. They are made again at the next page published.
        if attention.liveChanged { live = LiveGroups() }
        unregister(client)
        attention.forget(client)
        clients[client.descriptor] = nil
        waits.removeAll(client: client.descriptor)
    }

    /// Ends a connection's subscription (if any), releasing its filter set.
    func unsubscribe(_ client: EventClient) {
        client.snapshot = nil
        guard let subscription = client.subscription else { return }
        filters.release(subscription.filter)
        client.subscription = nil
    }

    /// The protocol version this server speaks (in `subscribed` and `pong`): 2 adds request ids,
    /// `unsubscribe`, transaction framing and `asOf`; a version-1 client, which sends none of them, is
    /// answered as before (unknown fields are ignored on both sides).
    static let protocolVersion: Int64 = 2

    /// `line` with `"id"` first when `id` is given.
    func tagged(_ line: [UInt8], _ id: EventRequest.RequestID?) -> [UInt8] { id?.tag(line) ?? line }

    /// Queues a reply (with the id of the request being answered, if it had one), or closes a connection
    /// that has let more than its budget pile up unread.
    func reply(_ client: EventClient, _ line: [UInt8]) {
        let bytes = replyingTo?.client == ObjectIdentifier(client) ? tagged(line, replyingTo?.id) : line
        guard withinBudget(client, adding: bytes.count) else {
            overBudget(client, "more than \(limits.queueBytes) bytes of replies are waiting to be read")
            return
        }
        client.send(bytes)
    }

    /// Whether `bytes` more may be queued for `client` (its budget and the total).
    func withinBudget(_ client: EventClient, adding bytes: Int) -> Bool {
        client.queuedBytes + bytes <= limits.queueBytes && account.bytes + bytes <= limits.totalQueueBytes
    }

    /// Tells a connection it went over a budget and closes it (what was queued for it is dropped).
    func overBudget(_ client: EventClient, _ what: String) {
        client.dropUnsent()
        client.send(EventError(code: .overBudget, message: what).line)
        unsubscribe(client)
        client.closing = true
        logger.warning(
            "closed a connection over its budget: \(what)",
            fields: client.logFields(event: "over-budget")
        )
    }

    func fail(_ client: EventClient, _ error: EventError) {
        reply(client, error.line)
        client.recordError(limit: limits.maxErrors)
    }

    /// Uses `engine` from now on (the file migrated to another model version): events are read with it.
    public func adopt(engine: SyncEngine) throws {
        source = try EventSource(engine: engine)
        self.engine = engine
    }

    /// `migrate`: for coexistd's own user or root only; the file migrates while the event service waits,
    /// then every subscriber is told (`schema_changed`) and goes on.
    func migrate(_ client: EventClient, to target: String?) throws {
        guard let migrate else {
            fail(client, EventError(code: .unknownOp, message: "this server does not migrate"))
            return
        }
        guard let credentials = client.credentials, credentials.uid == getuid() || credentials.uid == 0 else {
            fail(client, EventError(code: .forbidden, message: "migrate is for coexistd's own user or root"))
            return
        }
        let result: (from: String, to: String, fields: [(String, JSONField)])
        do {
            result = try migrate(target)
        } catch {
            let (exitCode, message) = describeFailure(error)
            reply(
                client,
                JSONWriter.message(
                    fields: [
                        ("type", .string("error")), ("code", .string("migration_failed")),
                        ("message", .string(message)),
                        ("exit", .integer(Int64(exitCode))),
                    ]
                )
            )
            return
        }
        reply(
            client,
            JSONWriter.message(
                fields: [("type", .string("migrated")), ("from", .string(result.from)), ("to", .string(result.to))]
                    + result.fields
            )
        )
        guard result.from != result.to else { return }
        let notice = JSONWriter.message(
            fields: [
                ("type", .string("schema_changed")), ("from", .string(result.from)), ("to", .string(result.to)),
                ("token", .integer(published)),
            ]
        )
        for other in clients.values where other.subscription != nil { reply(other, notice) }
    }

    func statusLine() throws -> [UInt8] {
        let cursor = try engine.cursor() ?? 0
        let last = try source.lastToken()
        return JSONWriter.message(
            fields: [
                ("type", JSONField.string("status")), ("phase", "serving"), ("cursor", .integer(cursor)),
                ("lastToken", .integer(last)),
                ("lag", .integer(max(0, last - cursor))), ("published", .integer(published)),
                ("clients", .integer(Int64(clients.count))), ("queuedBytes", .integer(Int64(account.bytes))),
                ("filterSets", .integer(Int64(filters.count))), ("waits", .integer(Int64(waits.count))),
                ("recentTransactions", .integer(Int64(recent.count))), ("recentBytes", .integer(Int64(recent.bytes))),
            ] + statusFields()
        )
    }
}
