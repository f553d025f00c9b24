import CoexistProtocol
import CoexistRuntime

/// Periodic work of the event loop: backlogs, `wait` replies, request timeouts, heartbeats, and when it is
/// next due.
extension EventServer {
    /// Periodic work: backlogs, `wait` replies, request timeouts, heartbeats. It goes over every client
    /// only when one noted periodic work, a heartbeat falls due, or a heartbeat interval has passed.
    public func tick(now: UInt64) {
        if attention.awaitingAcks > 0 { releaseDurableAcks(now: now) }
        if attention.periodic || now > nextHeartbeatDue || now >= lastClientPass &+ limits.heartbeatInterval {
            tickClients(now: now)
        }
        tickWaits(now: now)
    }

    /// The periodic work of every client; then what the next pass is due for.
    private func tickClients(now: UInt64) {
        attention.periodic = false
        lastClientPass = now
        // Backlogs are filled within one time budget per tick for all of them, starting after the client the
        // last tick filled last, so that many catching-up subscribers cannot hold the thread (the rest wait
        // for the next tick, which comes at once: ``nextDeadline(now:)``).
        let deadline = ContinuousClock.now + Self.backlogTickBudget
        var filledOne = false
        var ordered = Array(clients.values)
        if ordered.contains(where: { $0.subscription?.live == false }) {
            ordered.sort { $0.descriptor < $1.descriptor }
            if let split = ordered.firstIndex(where: { $0.descriptor > backlogCursor }) {
                ordered = Array(ordered[split...] + ordered[..<split])
            }
        }
        for client in ordered {
            if client.closing && !client.wantsToWrite {
                client.closed = true  // everything it was told is written
            } else if client.closing {
                // A peer that reads nothing of what it was told for as long as a request may take to arrive
                // is not waited for any longer; one that reads, however slowly, gets all of it.
                if client.closingSince == nil || client.writtenBytes != client.writtenAtCheck {
                    client.closingSince = now
                    client.writtenAtCheck = client.writtenBytes
                }
                if let since = client.closingSince, now >= since + limits.requestTimeout { client.closed = true }
            }
            // A closing client is told nothing more (a snapshot's read transaction, which holds back
            // checkpoints, is let go); one whose backlog read failed is tried again later.
            if client.closing, client.snapshot != nil { client.snapshot = nil }
            if client.subscription?.live == false, !client.closing, now >= client.backlogRetryAt,
                !filledOne || ContinuousClock.now < deadline
            {
                filledOne = true
                backlogCursor = client.descriptor
                do {
                    if client.snapshot != nil {
                        try fillSnapshot(client, now: now, until: deadline)
                    } else {
                        try inOneSnapshot { try fillBacklog(client, until: deadline) }
                    }
                } catch  where client.snapshot != nil {
                    endSnapshot(client, "the snapshot failed: \(error)")
                } catch {
                    client.backlogRetryAt = now &+ Self.backlogRetryDelay
                    fail(client, EventError(code: .internalError, message: "\(error)"))
                }
            }
            if let since = client.inputSince, now > since + limits.requestTimeout {
                client.input.removeAll()
                client.inputSince = nil
                client.send(
                    EventError(code: .requestTimeout, message: "a request line must arrive within the request timeout")
                        .line
                )
                client.closing = true
                client.flush()
            }
            if client.subscription != nil, now &+ heartbeatSlack > client.lastHeartbeat &+ limits.heartbeatInterval {
                client.lastHeartbeat = now
                // Queued behind unread events a heartbeat says nothing: it is sent only to a reader.
                if !client.wantsToWrite {
                    client.send(JSONWriter.message(["type": "heartbeat", "token": .integer(published)]))
                }
            }
            if client.closed { remove(client) }
        }
        var heartbeatDue = UInt64.max
        var periodic = false
        for client in clients.values {
            if client.subscription != nil {
                heartbeatDue = min(heartbeatDue, client.lastHeartbeat &+ limits.heartbeatInterval)
            }
            periodic =
                periodic || client.closing || client.closed || client.subscription?.live == false
                || client.snapshot != nil || client.inputSince != nil
            // A backstop: what a client waits for is noted as it changes.
            client.noteReadiness()
        }
        nextHeartbeatDue = heartbeatDue
        attention.periodic = attention.periodic || periodic
    }

    /// How much sooner than due a heartbeat may go, so that those of clients connected at different times go
    /// out in the same pass: at most one pass per slack for them, whatever the number of clients.
    var heartbeatSlack: UInt64 { limits.heartbeatInterval / 4 }

    /// Answers the waits the bridge's cursor reached and those past their deadline: O(log n) each.
    func tickWaits(now: UInt64) {
        guard !waits.isEmpty else { return }
        if let cursor = try? engine.cursor() { knownCursor = cursor }
        for wait in waits.reached(knownCursor) {
            if let client = clients[wait.client] {
                reply(client, tagged(waited(wait.token, cursor: knownCursor), wait.id))
            }
        }
        for wait in waits.expired(now) {
            guard let client = clients[wait.client] else { continue }
            reply(
                client,
                tagged(
                    EventError(
                        code: .timeout,
                        message: "token \(wait.token) not mirrored in time (cursor \(knownCursor))"
                    ).line,
                    wait.id
                )
            )
        }
    }

    func waited(_ token: Int64, cursor: Int64) -> [UInt8] {
        JSONWriter.message(["type": "waited", "token": .integer(token), "cursor": .integer(cursor)])
    }

    /// The nearest time `tick` has work (a wait's deadline, a heartbeat), for the poll timeout.
    public func nextDeadline(now: UInt64) -> UInt64 {
        // Just past when the next heartbeat falls due (one is sent once the interval has passed).
        var next = min(now + limits.heartbeatInterval, nextHeartbeatDue == .max ? .max : nextHeartbeatDue + 1)
        if acceptPausedUntil > now { next = min(next, acceptPausedUntil) }
        if let deadline = waits.nearestDeadline() { next = min(next, deadline) }
        // Clients with periodic work have noted it (``ClientAttention/periodic``): none, nothing to look at.
        guard attention.periodic else { return next }
        if clients.values.contains(where: { $0.subscription?.live == false || $0.inputSince != nil || $0.closing }) {
            next = min(next, now + 50_000_000)
        }
        // A snapshot or a backlog whose queue has room is filled again at once (a drained queue asks for no
        // POLLOUT; a fill stops at its time budget), a backlog whose read failed after the retry delay; a
        // snapshot waiting for the schemas to agree looks again shortly.
        for client in clients.values where !client.closing {
            guard let snapshot = client.snapshot else {
                if client.subscription?.live == false, client.hasBacklogRoom(limits) {
                    next = min(next, max(now, client.backlogRetryAt))
                }
                continue
            }
            if snapshot.token == nil {
                next = min(next, now + 2_000_000)
            } else if client.hasSnapshotRoom(limits) {
                next = now
            }
        }
        return next
    }
}
