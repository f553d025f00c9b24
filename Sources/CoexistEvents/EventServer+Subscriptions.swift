import CoexistBridge
import CoexistHistory
import CoexistProtocol
import CoexistRuntime
import CoexistSQLite

extension EventServer {
    func subscribe(_ client: EventClient, _ request: EventRequest) throws {
        guard client.subscription == nil else {
            throw EventError(code: .alreadySubscribed, message: "this connection is already subscribed")
        }
        let model = engine.new.model
        for entity in request.entities ?? [] where model.entity(named: entity) == nil {
            throw EventError(code: .unknownEntity, message: "no entity named \(entity)")
        }
        var sides: Set<Side>?
        if let names = request.sides {
            sides = Set(
                try names.map { name throws(EventError) -> Side in
                    guard let side = Side(rawValue: name) else {
                        throw EventError(
                            code: .invalidRequest,
                            message: "sides are \"legacy\" and \"new\", not \"\(name)\""
                        )
                    }
                    return side
                }
            )
        }
        var types: Set<ChangeType>?
        if let names = request.types {
            types = Set(
                try names.map { name throws(EventError) -> ChangeType in
                    guard let type = ChangeType.allCases.first(where: { $0.description == name }) else {
                        throw EventError(
                            code: .invalidRequest,
                            message: "types are insert, update and delete, not \"\(name)\""
                        )
                    }
                    return type
                }
            )
        }
        guard request.framing == nil || request.framing == "event" || request.framing == "transaction" else {
            throw EventError(code: .invalidRequest, message: "framing is \"event\" or \"transaction\"")
        }
        if let name = request.name, name.isEmpty || name.utf8.count > 200 {
            throw EventError(code: .invalidRequest, message: "a consumer name has 1 to 200 bytes")
        }
        if let name = request.name, name.hasPrefix(ConsumerTable.reservedPrefix) {
            // coexistd's own positions (the JetStream publisher's) are kept under these names.
            throw EventError(code: .invalidRequest, message: "consumer names starting with coexist: are reserved")
        }
        // "now" and the backlog bound mean what is committed now, not what the last wake-up published.
        try inOneSnapshot { try publishPending() }
        var position: Int64
        let acked = try request.name.flatMap { name in
            let stored = try ConsumerTable.acked(engine.connection, name: name)
            let posted = consumers.pendingToken(for: name)
            return stored.map { max($0, posted ?? $0) } ?? posted
        }
        switch request.since {
        case .token(let token)?: position = token
        case .now?, .snapshot?: position = published
        case nil: position = acked ?? published
        }
        // A token beyond what is published (a commit this server has not seen yet) is kept: the events up
        // to it are skipped as they are published, never sent.
        if let oldest = try source.oldestToken(), Self.isPruned(after: position, oldest: oldest), position < published {
            throw EventError(code: .tokenExpired, message: "history after token \(position) was pruned", oldest: oldest)
        }
        if let name = request.name, acked == nil {
            let now = TransactionWriter.now()
            let since = limits.consumerExpiry > 0 ? now - Double(limits.consumerExpiry) / 1e9 : nil
            // Names on their way to the table count too.
            let arriving = try consumers.pendingNames.filter {
                try ConsumerTable.acked(engine.connection, name: $0) == nil
            }
            let active = try ConsumerTable.activeCount(engine.connection, since: since) + arriving.count
            guard active < limits.maxConsumers else {
                throw EventError(
                    code: .tooManyConsumers,
                    message: "\(active) durable consumers are active (max-consumers); a new name is refused"
                )
            }
            // A new consumer's mark is at most what is published: it holds back what it may still receive.
            consumers.post(name: name, token: min(position, published), at: TransactionWriter.now())
        } else if let name = request.name, let acked {
            // A subscribe is hearing from the consumer: it stays active (its position never moves back).
            consumers.post(name: name, token: acked, at: TransactionWriter.now())
        }
        var entities: Set<String>?
        if let names = request.entities {
            // An entity selects its sub-entities too.
            entities = Set(
                names.flatMap { name in model.entity(named: name).map { model.hierarchy(from: $0).map(\.name) } ?? [] }
            )
        }
        let spec = FilterSpec(
            entities: entities,
            sides: sides,
            authors: request.authors.map(Set.init),
            types: types,
            mirrors: request.mirrors ?? false
        )
        guard let filter = filters.acquire(spec, maximumBytes: Self.maximumFilterBytes) else {
            overBudget(client, "the filter sets of all subscriptions hold \(filters.bytes) bytes; no room for more")
            return
        }
        client.subscription = EventClient.Subscription(
            name: request.name,
            entities: spec.entities,
            sides: spec.sides,
            authors: spec.authors,
            types: spec.types,
            values: request.values ?? false,
            mirrors: spec.mirrors,
            transactions: request.framing == "transaction",
            filter: filter,
            position: position,
            live: false
        )
        client.delivered = position
        if request.since == .snapshot {
            guard clients.values.filter({ $0.snapshot != nil }).count < Self.maxSnapshots else {
                unsubscribe(client)
                throw EventError(
                    code: .overBudget,
                    message: "\(Self.maxSnapshots) snapshots are being read; subscribe again later"
                )
            }
            do {
                client.snapshot = try SnapshotReader(
                    store: engine.new,
                    entities: spec.entities,
                    deadline: Monotonic.now() + Self.snapshotAgreementTimeout
                )
            } catch {
                unsubscribe(client)
                throw error
            }
        }
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("type")
        writer.string("subscribed")
        writer.key("since")
        if client.snapshot != nil { writer.string("snapshot") } else { writer.integer(position) }
        writer.key("token")
        writer.integer(published)
        writer.key("name")
        writer.string(request.name)
        // Last: the fields of protocol 1 keep their places (some clients read them by position).
        writer.key("protocol")
        writer.integer(Self.protocolVersion)
        writer.endObject()
        reply(client, writer.line)
        // A subscriber with nothing to catch up is live at once; a backlog is read by the periodic work, a time
        // budget at a time for all subscribers together, so that many subscribing at once hold no one up.
        if client.snapshot == nil, position >= published { try fillBacklog(client, until: .now) }
    }

    /// Whether history after `position` is gone: the oldest token kept is beyond the next one (no overflow
    /// for any position a client can send).
    static func isPruned(after position: Int64, oldest: Int64) -> Bool {
        oldest > 1 && position < oldest - 1
    }

    /// Whether `event` passes the subscription's filters.
    func matches(_ event: EncodedEvent, _ subscription: EventClient.Subscription) -> Bool {
        matches(
            event,
            FilterSpec(
                entities: subscription.entities,
                sides: subscription.sides,
                authors: subscription.authors,
                types: subscription.types,
                mirrors: subscription.mirrors
            )
        )
    }

    /// Whether `event` passes the filters of `spec`.
    func matches(_ event: EncodedEvent, _ spec: FilterSpec) -> Bool {
        if event.isMirror && !spec.mirrors { return false }
        if let entities = spec.entities, !entities.contains(event.entity ?? "") { return false }
        if let sides = spec.sides, !sides.contains(event.side) { return false }
        if let authors = spec.authors, !authors.contains(event.author ?? "") { return false }
        if let types = spec.types, !types.contains(event.change) { return false }
        return true
    }

    /// Queues `events` (those that pass the subscription's filters; all of them when `filtered` says they
    /// were chosen by its filter set already), or, when the subscriber's queue is full, tells it it lagged
    /// and disconnects it. Returns false after a lag.
    func deliver(_ events: [EncodedEvent], to client: EventClient, filtered: Bool = false) -> Bool {
        guard let subscription = client.subscription else { return true }
        if subscription.transactions {
            let taken = filtered ? events : events.filter { matches($0, subscription) }
            guard let message = WireLine(transaction: taken, values: subscription.values) else { return true }
            return deliver(message, to: client)
        }
        defer { client.flush() }
        let taken = filtered ? events : events.filter { matches($0, subscription) }
        // A transaction larger than the whole limit still goes to a subscriber that has nothing queued, as a
        // joined one does (else it could never be delivered: a subscriber resuming before it would lag again).
        let whole = client.queuedEvents == 0
        for (index, event) in taken.enumerated() {
            let line = subscription.values ? (event.withValues ?? event.plain) : event.plain
            // Let the socket take what it can before judging the queue full.
            if !whole, client.queuedEvents >= limits.queueLimit || !withinBudget(client, adding: line.count) {
                client.flush()
            }
            guard whole || (client.queuedEvents < limits.queueLimit && withinBudget(client, adding: line.count)) else {
                lag(client)
                return false
            }
            // The transaction counts as delivered once its last event for this client is written.
            client.enqueue(line, completes: index == taken.count - 1 ? line.token : nil)
        }
        return true
    }

    /// Queues a transaction's events joined in one message (every one passes the subscription's filters),
    /// or tells the subscriber it lagged. Returns false after a lag.
    func deliver(_ batch: WireLine, to client: EventClient) -> Bool {
        defer { client.flush() }
        func fits() -> Bool {
            client.queuedEvents + batch.events <= limits.queueLimit && withinBudget(client, adding: batch.count)
        }
        if !fits() { client.flush() }
        // A transaction larger than the whole limit still goes to a subscriber that has nothing queued.
        guard fits() || client.queuedEvents == 0 else {
            lag(client)
            return false
        }
        client.enqueue(batch)
        return true
    }

    /// Whether `client`'s queue takes all of a backlog transaction's `events` at once: it holds none, or they
    /// fit in its bounds (a catching-up subscriber is never cut off inside a transaction: it waits for room).
    func takesWhole(_ events: [EncodedEvent], _ client: EventClient) -> Bool {
        guard client.queuedEvents > 0, let subscription = client.subscription else { return true }
        let taken = events.filter { matches($0, subscription) }
        let bytes = taken.reduce(0) { $0 + (subscription.values ? ($1.withValues ?? $1.plain) : $1.plain).count }
        return client.queuedEvents + taken.count <= limits.queueLimit && withinBudget(client, adding: bytes)
    }

    func lag(_ client: EventClient) {
        let resume = client.dropUnsentEvents()
        client.send(
            JSONWriter.message([
                "type": "lagged", "token": .integer(resume),
                "message": .string(
                    "the subscriber fell more than \(limits.queueLimit) events or \(limits.queueBytes) bytes behind; "
                        + "resume with since = token"
                ),
            ])
        )
        unsubscribe(client)
        client.closing = true
        var fields = client.logFields(event: "lagged")
        fields[.token] = "\(resume)"
        logger.warning("a subscriber lagged and was disconnected at token \(resume)", fields: fields)
    }

    /// Tells every client the server stops, and closes them.
    public func shutdown() {
        for client in clients.values {
            client.send(
                JSONWriter.message([
                    "type": "shutdown", "token": .integer(published), "message": "coexistd is stopping",
                ])
            )
        }
        for client in clients.values { unregister(client) }
        clients.removeAll()
        live = LiveGroups()
        _ = attention.takeReadiness()
        waits.removeAll()
    }
}
