import CoexistBridge
import CoexistHistory
import CoexistProtocol
import CoexistSQLite

/// Delivery: a catching-up subscriber's backlog (from the recent-events record or the history, in bounded
/// steps) and the live events of every commit, in token order.
extension EventServer {
    /// Sends a catching-up subscriber its backlog from the database, a page at a time while its queue has
    /// room, until `deadline` (a page at least); switches it to live (with `end_of_backlog`) once it reaches
    /// what is published. One cut short by the deadline is filled again on a later pass of the loop, after
    /// what else is ready (``nextDeadline(now:)``).
    func fillBacklog(_ client: EventClient, until deadline: ContinuousClock.Instant) throws {
        var fromRecord = true
        var first = true
        while var subscription = client.subscription, !subscription.live, client.hasBacklogRoom(limits),
            first || ContinuousClock.now < deadline
        {
            first = false
            if subscription.position >= published {
                subscription.live = true
                client.subscription = subscription
                client.send(JSONWriter.message(["type": "end_of_backlog", "token": .integer(subscription.position)]))
                return
            }
            if let oldest = try source.oldestToken(), Self.isPruned(after: subscription.position, oldest: oldest) {
                client.send(
                    EventError(
                        code: .tokenExpired,
                        message: "history after token \(subscription.position) was pruned",
                        oldest: oldest
                    ).line
                )
                unsubscribe(client)
                client.closing = true
                return
            }
            // Recent transactions are given as they were encoded when published. The position moves with each
            // transaction queued, so that a read failing halfway sends none twice when tried again; a record
            // of transactions the filters take nothing of is gone through within the deadline too.
            if fromRecord, !subscription.values, let cached = recent.after(subscription.position), !cached.isEmpty {
                for entry in cached where entry.token <= published {
                    guard let events = try entry.events ?? historyEvents(of: entry.token, after: subscription.position)
                    else {
                        fromRecord = false  // a hole no longer in the history: the history path decides
                        break
                    }
                    // A transaction not taken whole now waits for the queue to empty (then it is).
                    guard takesWhole(events, client) else { return }
                    guard deliver(events, to: client) else { return }
                    subscription.position = entry.token
                    client.subscription = subscription
                    if !client.hasBacklogRoom(limits) || ContinuousClock.now >= deadline { break }
                }
                continue
            }
            // A few transactions at a time: the page is read again from the history when the socket took it.
            let page = try source.transactions(after: subscription.position, through: published, limit: 16)
            for transaction in page {
                let events = try source.events(transaction, values: subscription.values)
                guard takesWhole(events, client) else { return }
                guard deliver(events, to: client) else { return }
                subscription.position = transaction.token
                client.subscription = subscription
                if !client.hasBacklogRoom(limits) { break }
            }
            if page.isEmpty {
                subscription.position = published
                client.subscription = subscription
            }
        }
    }

    /// The events (without values) of transaction `token`, read from the history; `position` is the token
    /// before it.
    private func historyEvents(of token: Int64, after position: Int64) throws -> [EncodedEvent]? {
        guard let transaction = try source.transactions(after: position, through: token, limit: 1).first,
            transaction.token == token
        else { return nil }
        return try source.events(transaction, values: false)
    }

    /// Gives live subscribers the events of every transaction committed since the last call, in token order.
    /// `firstHandled` is called once the first of them that is not the bridge's own is delivered, not at all
    /// when there is none: the caller may wake other work then rather than after the last.
    public func publish(now: UInt64, firstHandled: () -> Void = {}) throws {
        try inOneSnapshot { try publishPending(firstHandled: firstHandled) }
        // A client closed since (a write failed) noted it.
        if attention.periodic { for client in clients.values where client.closed { remove(client) } }
    }

    /// Runs `body` in one read transaction (one snapshot, one set of WAL locks for all its queries).
    func inOneSnapshot<T>(_ body: () throws -> T) throws -> T {
        engine.connection.isAutocommit ? try engine.connection.read(body) : try body()
    }

    /// A subscription's position: for a live one, at least the last published token (it is not moved for
    /// each transaction its filters take nothing of).
    func position(of subscription: EventClient.Subscription) -> Int64 {
        subscription.live ? max(subscription.position, published) : subscription.position
    }

    func publishPending(firstHandled: () -> Void = {}) throws {
        var handledOne = false
        func handled() {
            if !handledOne {
                handledOne = true
                firstHandled()
            }
        }
        let last = try source.lastToken()
        while published < last {
            let page = try source.transactions(after: published, through: last, limit: 256)
            guard let first = page.first else {
                source.forgetAll()
                published = last
                break
            }
            // Transactions between were pruned unseen: what is remembered of objects may be stale.
            if first.token > published + 1 { source.forgetAll() }
            if attention.liveChanged {
                attention.liveChanged = false
                live = LiveGroups(clients.values)
            }
            let wantsValues = live.wantValues || feed?.values == true
            let wantsMirrors = live.wantMirrors || feed?.mirrors == true
            // When the page reaches the snapshot's last token, the values read in it are an event's own
            // unless a later transaction of the page changed the same object.
            var lastChange: [EventSource.ChangedObject: Int64] = [:]
            let complete = wantsValues && page.last?.token == last
            if complete {
                for transaction in page {
                    for change in transaction.changes {
                        lastChange[EventSource.ChangedObject(change)] = transaction.token
                    }
                }
            }
            for transaction in page {
                // The bridge's own transaction, which no live subscriber takes: not encoded at all (a hole in
                // the record: a catching-up subscriber reads it from the history).
                let isMirror = transaction.author == engine.configuration.author
                if isMirror, !wantsMirrors {
                    source.forget(transaction)
                    recent.add(token: transaction.token, after: published, events: nil)
                    feed?.append(
                        EventFeed.Transaction(token: transaction.token, after: published, isMirror: true, events: nil)
                    )
                    published = transaction.token
                    continue
                }
                // Subscribers catching up will want these events soon: they are encoded (and kept) even when
                // no live subscriber takes them.
                let encode = !live.isEmpty || live.catchingUp || feed != nil
                let unchanged: ((EventSource.ChangedObject) -> Bool)? =
                    complete ? { lastChange[$0] == transaction.token } : nil
                let events =
                    encode
                    ? try source.events(transaction, values: wantsValues, unchangedSince: unchanged, remembering: true)
                    : []
                if encode {
                    recent.add(token: transaction.token, after: published, events: events)
                } else {
                    source.forget(transaction)
                }
                // Before the sockets are written: the publisher's thread takes it from here.
                feed?.append(
                    EventFeed.Transaction(
                        token: transaction.token,
                        after: published,
                        isMirror: isMirror,
                        events: events
                    )
                )
                deliver(events, of: transaction.token)
                published = transaction.token
                if !isMirror { handled() }
            }
        }
    }

    /// Gives each live group the events of transaction `token` its filters take: matched once per group,
    /// encoded once per group for transaction framing and once in all for whole transactions.
    private func deliver(_ events: [EncodedEvent], of token: Int64) {
        var batch: WireLine?
        for group in live.groups {
            guard let spec = filters.spec(group.filter) else { continue }
            let matching = events.filter { matches($0, spec) }
            guard !matching.isEmpty else { continue }
            let passing = matching.count == events.count ? events : matching
            // `"framing":"transaction"` messages, with values and without.
            var framed: [Bool: WireLine?] = [:]
            for client in group.clients {
                // Gone since the groups were made (a lag, an unsubscribe), or subscribed from a later token.
                guard client.subscription?.live == true, client.subscription?.filter == group.filter,
                    let position = client.subscription?.position, position < token
                else { continue }
                let values = client.subscription?.values == true
                if client.subscription?.transactions == true {
                    let message: WireLine?
                    if let known = framed[values] {
                        message = known
                    } else {
                        message = WireLine(transaction: passing, values: values)
                        framed[values] = message
                    }
                    if let message { _ = deliver(message, to: client) }
                } else if passing.count > 1 && passing.count == events.count && !values {
                    let joined = batch ?? WireLine(joining: events.map(\.plain), token: token)
                    batch = joined
                    _ = deliver(joined, to: client)
                } else {
                    _ = deliver(passing, to: client, filtered: true)
                }
            }
        }
    }
}

extension EventClient {
    /// Whether its queue takes more of its backlog or snapshot: under half its bounds, in events and in
    /// bytes, and under the backlog's high water (a catching-up subscriber that does not read is paused,
    /// never cut off as lagged).
    func hasBacklogRoom(_ limits: EventServer.Limits) -> Bool {
        queuedEvents < limits.queueLimit / 2 && hasSnapshotRoom(limits)
    }

    /// Whether its queue takes more snapshot rows: under half its bound in bytes and under the backlog's
    /// high water.
    func hasSnapshotRoom(_ limits: EventServer.Limits) -> Bool {
        queuedBytes < min(EventServer.backlogHighWater, limits.queueBytes / 2)
    }
}
