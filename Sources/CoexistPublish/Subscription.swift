internal import CNats

/// A plain NATS subscription on a subject (wildcards allowed): every message published on it from now on, as
/// the server routes it, whether or not a stream stores it. Not thread-safe: one owner reads it.
public final class Subscription {
    private let subscription: OpaquePointer
    /// Keeps the connection open while the subscription lives.
    private let owner: JetStream

    init(_ subscription: OpaquePointer, owner: JetStream) {
        self.subscription = subscription
        self.owner = owner
    }

    deinit {
        natsSubscription_Unsubscribe(subscription)
        natsSubscription_Destroy(subscription)
    }

    /// The next message with the headers named in `headers`, waiting up to `timeout` milliseconds; nil when
    /// none came in time.
    public func next(timeout: Int64, headers names: [String] = []) throws(PublishError) -> JetStream.Message? {
        var message: OpaquePointer?
        let status = natsSubscription_NextMsg(&message, subscription, timeout)
        if status == NATS_TIMEOUT { return nil }
        guard status == NATS_OK, let message else { throw PublishError("next message", status) }
        defer { natsMsg_Destroy(message) }
        return JetStream.read(message, headers: names)
    }
}

extension JetStream {
    /// Subscribes to `subject` on this connection.
    public func subscribe(_ subject: String) throws(PublishError) -> Subscription {
        var subscription: OpaquePointer?
        let status = natsConnection_SubscribeSync(&subscription, connection, subject)
        guard status == NATS_OK, let subscription else { throw PublishError("subscribe \(subject)", status) }
        // Pending messages are bounded by the client's defaults (65,536 messages, 64 MiB); a slow reader
        // loses messages beyond them (the stream keeps them).
        return Subscription(subscription, owner: self)
    }
}
