/// What the event server must look at again among its clients, noted by each client as its state changes:
/// a wake-up of the event thread then costs what changed, not the number of connections.
final class ClientAttention {
    /// Clients whose registration for readiness may no longer be what they wait for (new, output queued or
    /// drained, an ack awaited or answered). The server takes them at each ``EventServer/syncReadiness(now:)``.
    /// Each knows its place (``EventClient/readinessSlot``), so that one is taken out in O(1).
    private(set) var readiness: [EventClient] = []
    /// Whether some client may have periodic work: closing or closed, catching up, reading a snapshot, or
    /// with a request line begun. The server's next pass over every client recomputes it.
    var periodic = false
    /// Clients whose ack waits to be durable.
    var awaitingAcks = 0
    /// Whether a subscription began, ended, went live or changed filter sets since the server last grouped
    /// its live subscribers (``LiveGroups``).
    var liveChanged = true

    /// Notes `client` for the next sync (once).
    func noteReadiness(_ client: EventClient) {
        guard client.readinessSlot == nil else { return }
        client.readinessSlot = readiness.count
        readiness.append(client)
    }

    /// Takes `client` out of the noted ones (removed before the next sync).
    func forget(_ client: EventClient) {
        guard let slot = client.readinessSlot, slot < readiness.count, readiness[slot] === client else { return }
        let last = readiness.removeLast()
        if last !== client {
            readiness[slot] = last
            last.readinessSlot = slot
        }
        client.readinessSlot = nil
    }

    /// Takes every noted client (for a sync), or drops them all.
    func takeReadiness() -> [EventClient] {
        let taken = readiness
        readiness.removeAll(keepingCapacity: true)
        for client in taken { client.readinessSlot = nil }
        return taken
    }
}
