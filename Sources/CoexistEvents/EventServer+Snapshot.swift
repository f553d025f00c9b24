import CoexistProtocol

/// Snapshot subscriptions (`"since":"snapshot"`): their rows, a page at a time, then their backlog.
extension EventServer {
    /// Ends a snapshot subscription that cannot go on: no row after what was sent, an error naming why.
    func endSnapshot(_ client: EventClient, _ why: String) {
        client.snapshot = nil
        unsubscribe(client)
        reply(client, EventError(code: .snapshotUnavailable, message: why).line)
    }

    /// Sends a snapshot subscriber its rows, a page at a time while its queue has room; then
    /// `end_of_snapshot` and its backlog from the snapshot's token. Until the file's schemas agree (every
    /// transaction mirrored, none parked) the snapshot waits, at most ``snapshotAgreementTimeout``.
    func fillSnapshot(_ client: EventClient, now: UInt64, until deadline: ContinuousClock.Instant) throws {
        guard let snapshot = client.snapshot, var subscription = client.subscription else { return }
        if snapshot.token == nil {
            guard try snapshot.begin() else {
                if now > snapshot.deadline {
                    client.snapshot = nil
                    unsubscribe(client)
                    reply(
                        client,
                        EventError(
                            code: .snapshotUnavailable,
                            message: "the bridge did not catch up (or has parked transactions): subscribe again later"
                        ).line
                    )
                }
                return
            }
            snapshot.startedAt = now
        }
        if now > snapshot.startedAt + limits.snapshotMaxDuration {
            endSnapshot(
                client,
                "the snapshot was not read within snapshot-max-duration (\(limits.snapshotMaxDuration / 1_000_000_000) s)"
            )
            return
        }
        // A reader that takes nothing for as long as a request may take ends it: the read transaction holds
        // back checkpoints.
        if client.writtenBytes != snapshot.writtenAtCheck {
            snapshot.writtenAtCheck = client.writtenBytes
            snapshot.progressAt = now
        } else if now > snapshot.progressAt + limits.requestTimeout {
            endSnapshot(client, "the subscriber read nothing of its snapshot for the request timeout")
            return
        }
        var first = true
        while client.hasSnapshotRoom(limits), first || ContinuousClock.now < deadline {
            first = false
            let lines: [[UInt8]]
            do {
                lines = try snapshot.nextRows(limit: 256)
            } catch {
                endSnapshot(client, "the snapshot failed: \(error)")
                return
            }
            guard !lines.isEmpty else {
                let token = snapshot.token ?? published
                client.snapshot = nil
                subscription.position = token
                client.subscription = subscription
                client.delivered = token
                client.send(
                    JSONWriter.message([
                        "type": "end_of_snapshot", "token": .integer(token), "rows": .integer(Int64(snapshot.rows)),
                    ])
                )
                return
            }
            for line in lines {
                guard withinBudget(client, adding: line.count) else {
                    overBudget(client, "the snapshot's rows went over the queue budget")
                    return
                }
                client.send(line)
            }
            client.flush()
        }
    }
}
