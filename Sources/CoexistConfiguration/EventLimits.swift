/// The event server's limits and access control.
///
/// Every peer has a budget of each resource it can make the server hold, and the server a total; a peer
/// over one gets an error (`over_budget`, `lagged`, `too_many_consumers`, `line_too_long`) and is
/// closed, and nobody else notices. The defaults are those of `config/coexistd.conf`.
public struct EventLimits: Sendable {
    /// Connections served at once.
    public var maxClients = 1_024
    /// A request line's longest length in bytes (newline not counted).
    public var maxLineLength = 65_536
    /// A request line must complete within this time (nanoseconds).
    public var requestTimeout: UInt64 = 10_000_000_000
    /// Events queued for one subscriber before it is told it lagged and disconnected.
    public var queueLimit = 10_000
    /// Bytes queued for one connection (events, replies, heartbeats) before it is told it lagged (a
    /// subscriber) or is over budget (replies it does not read), and is disconnected.
    public var queueBytes = 16 << 20
    /// Bytes queued for all connections together (a message shared by N subscribers counts N times);
    /// the connection whose message would pass it is treated as over its own budget.
    public var totalQueueBytes = 1 << 30
    /// A snapshot subscription's rows must all be read within this time (nanoseconds) from the start of its
    /// read transaction, which holds checkpoints back (the WAL grows meanwhile); past it, the snapshot
    /// ends with `snapshot_unavailable`.
    public var snapshotMaxDuration: UInt64 = 30 * 60 * 1_000_000_000
    /// `wait` requests one connection may have pending.
    public var maxPendingRequests = 1_024
    /// Durable consumers (named subscriptions) heard from within `consumerExpiry`; a new name beyond
    /// them is refused with `too_many_consumers`.
    public var maxConsumers = 64
    /// A durable consumer silent for longer (nanoseconds) no longer counts against `maxConsumers` nor
    /// holds history back from pruning; 0: never expires.
    public var consumerExpiry: UInt64 = 7 * 86_400 * 1_000_000_000
    /// Heartbeat interval (nanoseconds).
    public var heartbeatInterval: UInt64 = 5_000_000_000
    /// When either list is non-empty, a peer must have one of these uids or gids (SO_PEERCRED).
    public var allowUIDs: [UInt32] = []
    public var allowGIDs: [UInt32] = []

    /// Whether a peer of `uid` and `gid` (nil: its credentials could not be read) may use the socket: no
    /// list is set, or one holds its uid or gid.
    public func admits(uid: UInt32?, gid: UInt32?) -> Bool {
        if allowUIDs.isEmpty && allowGIDs.isEmpty { return true }
        return uid.map(allowUIDs.contains) == true || gid.map(allowGIDs.contains) == true
    }
    /// Errors after which a connection is closed.
    public var maxErrors = 5

    public init() {}
}
