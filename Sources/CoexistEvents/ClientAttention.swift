/// What the event server must look at again among its clients, noted by each client as its state changes:
/// a wake-up of the event thread then costs what changed, not the number of connections.
final class ClientAttention {
    /// Clients whose registration for readiness may no longer be what they wait for (new, output queued or
    /// drained, an ack awaited or answered). The server takes them at each ``EventServer/syncReadiness(now:)``.
    var readiness: [EventClient] = []
    /// Whether some client may have periodic work: closing or closed, catching up, reading a snapshot, or
    /// with a request line begun. The server's next pass over every client recomputes it.
    var periodic = false
    /// Clients whose ack waits to be durable.
    var awaitingAcks = 0
    /// Whether a subscription began, ended, went live or changed filter sets since the server last grouped
    /// its live subscribers (``LiveGroups``).
    var liveChanged = true
}
