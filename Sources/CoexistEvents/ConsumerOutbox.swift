import CoexistRuntime
public import CoexistSQLite

/// The durable consumers' acknowledgements on their way to the database. The event service never writes
/// the database: it posts each position here and the bridge service, the one writer, records the pending
/// ones in `coexist_consumer` in one write transaction and says up to which it has. The event service
/// answers an `ack` only once it is durable, so a consumer told `acked` never has those events again.
public final class ConsumerOutbox: Sendable {
    /// One position to record.
    public struct Write: Sendable, Equatable {
        /// Its number: positions become durable in this order.
        public var sequence: UInt64
        public var name: String
        public var token: Int64
        /// When it was acknowledged (seconds since 2001).
        public var at: Double
    }

    private struct State {
        var pending: [Write] = []
        var next: UInt64 = 1
        var durable: UInt64 = 0
    }

    private let state = PthreadLocked(State())
    private let onPost: @Sendable () -> Void

    /// An outbox; `onPost` wakes the writer (called on the poster's thread, outside the lock).
    public init(onPost: @escaping @Sendable () -> Void = {}) { self.onPost = onPost }

    /// Queues `name`'s position `token` and returns its sequence number.
    @discardableResult
    public func post(name: String, token: Int64, at time: Double) -> UInt64 {
        let sequence = state.withLock { state in
            defer { state.next += 1 }
            state.pending.append(Write(sequence: state.next, name: name, token: token, at: time))
            return state.next
        }
        onPost()
        return sequence
    }

    /// Every position up to this sequence number is in the database.
    var durable: UInt64 { state.withLock { $0.durable } }

    /// Positions posted and not yet durable.
    public var pendingCount: Int { state.withLock { $0.pending.count } }

    /// The highest position of `name` still on its way, if any.
    func pendingToken(for name: String) -> Int64? {
        state.withLock { state in state.pending.filter { $0.name == name }.map(\.token).max() }
    }

    /// The lowest position on its way, if any: history after it must not be pruned yet.
    public var lowestPendingToken: Int64? { state.withLock { $0.pending.map(\.token).min() } }

    /// The names with a position on its way.
    var pendingNames: Set<String> { state.withLock { Set($0.pending.map(\.name)) } }

    /// The writer's side: records every pending position on `connection` in one write transaction, then
    /// marks them durable. On failure nothing is marked and the positions stay pending (tried again the next
    /// time). Returns how many were written.
    @discardableResult
    public func write(to connection: Connection) throws -> Int {
        let batch = state.withLock { $0.pending }
        guard let last = batch.last else { return 0 }
        try connection.write {
            try ConsumerTable.create(connection)
            for write in batch {
                try ConsumerTable.ack(connection, name: write.name, token: write.token, now: write.at)
            }
        }
        state.withLock { state in
            state.pending.removeAll { $0.sequence <= last.sequence }
            state.durable = max(state.durable, last.sequence)
        }
        return batch.count
    }
}
