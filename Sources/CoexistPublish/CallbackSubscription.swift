internal import CNats

/// A plain NATS subscription whose messages are handed to a closure on the client library's delivery
/// threads (with ``JetStream/init(servers:name:timeout:security:sharedDelivery:)``'s `sharedDelivery`, the
/// library's shared pool: one thread however many subscriptions; else a thread of its own). It takes every
/// message sent to it (no bound on those waiting). Ends when released, though a call of the closure may
/// still be running then (it must only touch what outlives it, or what it holds).
public final class CallbackSubscription {
    /// What the C callback reaches through its closure pointer.
    final class Handler {
        let headers: [String]
        let payload: Bool
        let body: @Sendable (JetStream.Message) -> Void

        init(headers: [String], payload: Bool, body: @escaping @Sendable (JetStream.Message) -> Void) {
            self.headers = headers
            self.payload = payload
            self.body = body
        }
    }

    private let subscription: OpaquePointer
    /// Keeps the connection open while the subscription lives.
    private let owner: JetStream

    init(_ subscription: OpaquePointer, owner: JetStream) {
        self.subscription = subscription
        self.owner = owner
    }

    deinit {
        // The handler is released by the completion callback, once the library has handed the last message.
        natsSubscription_Unsubscribe(subscription)
        natsSubscription_Destroy(subscription)
    }
}

extension JetStream {
    /// Subscribes to `subject`, handing each message (with the headers named in `headers`, and its payload
    /// unless not `payload`: a reader that only counts spares the copy) to `body` on a delivery thread.
    public func subscribe(
        _ subject: String,
        headers: [String] = [],
        payload: Bool = true,
        _ body: @escaping @Sendable (Message) -> Void
    ) throws(PublishError) -> CallbackSubscription {
        let handler = CallbackSubscription.Handler(headers: headers, payload: payload, body: body)
        let closure = Unmanaged.passRetained(handler).toOpaque()
        var subscription: OpaquePointer?
        var status = natsConnection_Subscribe(
            &subscription,
            connection,
            subject,
            { _, _, message, closure in
                guard let message else { return }
                defer { natsMsg_Destroy(message) }
                guard let closure else { return }
                let handler = Unmanaged<CallbackSubscription.Handler>.fromOpaque(closure).takeUnretainedValue()
                handler.body(JetStream.read(message, headers: handler.headers, payload: handler.payload))
            },
            closure
        )
        guard status == NATS_OK, let subscription else {
            Unmanaged<CallbackSubscription.Handler>.fromOpaque(closure).release()
            throw PublishError("subscribe \(subject)", status)
        }
        status = natsSubscription_SetOnCompleteCB(
            subscription,
            { closure in
                if let closure { Unmanaged<CallbackSubscription.Handler>.fromOpaque(closure).release() }
            },
            closure
        )
        if status == NATS_OK { status = natsSubscription_SetPendingLimits(subscription, -1, -1) }
        guard status == NATS_OK else {
            natsSubscription_Unsubscribe(subscription)
            natsSubscription_Destroy(subscription)
            // When the completion callback could not be set, the handler stays (it may be running): a small
            // leak on a failure that does not happen with a valid subscription; otherwise that callback frees it.
            throw PublishError("subscribe \(subject)", status)
        }
        return CallbackSubscription(subscription, owner: self)
    }
}
