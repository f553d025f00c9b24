internal import CNats

/// A plain NATS subscription on a subject (wildcards allowed): every message published on it from now on, as
/// the server routes it, whether or not a stream stores it. Not thread-safe: one owner reads it.
public final class Subscription {
    private let subscription: OpaquePointer
    /// Keeps the connection open while the subscription lives (nil for the connection's own reply
    /// subscription, which the connection holds).
    private let owner: JetStream?

    init(_ subscription: OpaquePointer, owner: JetStream?) {
        self.subscription = subscription
        self.owner = owner
    }

    deinit {
        natsSubscription_Unsubscribe(subscription)
        natsSubscription_Destroy(subscription)
    }

    /// A reply to a request: a message, or the server's word that nobody takes the request's subject (the
    /// reply subject, when the client still has it).
    enum Reply {
        case message(JetStream.Message)
        case noResponders(subject: String?)
    }

    /// The next reply, waiting up to `timeout` milliseconds; nil when none came in time. The client
    /// library's message is added to `spent`, for the caller to release.
    func reply(timeout: Int64, spent: inout [OpaquePointer]) throws(PublishError) -> Reply? {
        var message: OpaquePointer?
        let status = natsSubscription_NextMsg(&message, subscription, timeout)
        if let message { spent.append(message) }
        switch status {
        case NATS_OK:
            guard let message else { return nil }
            return .message(JetStream.read(message, headers: []))
        case NATS_TIMEOUT: return nil
        case NATS_NO_RESPONDERS: return .noResponders(subject: message.map { String(cString: natsMsg_GetSubject($0)) })
        default: throw PublishError("next reply", status)
        }
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
        // Pending messages are bounded by the client's defaults (65,536 messages, 64 MiB); a slow reader
        // loses messages beyond them (the stream keeps them).
        Subscription(try subscribeSync(subject), owner: self)
    }

    private func subscribeSync(_ subject: String) throws(PublishError) -> OpaquePointer {
        var subscription: OpaquePointer?
        let status = natsConnection_SubscribeSync(&subscription, connection, subject)
        guard status == NATS_OK, let subscription else { throw PublishError("subscribe \(subject)", status) }
        return subscription
    }

    /// The subscription replies to pipelined publishes come to (`_INBOX.coexist.RANDOM.N`), made once.
    func replies() throws(PublishError) -> (prefix: String, subscription: Subscription) {
        if let inbox { return inbox }
        let prefix = "_INBOX.coexist.\(UInt64.random(in: 0...UInt64.max))"
        let made = (prefix, Subscription(try subscribeSync(prefix + ".*"), owner: nil))
        inbox = made
        return made
    }
}
