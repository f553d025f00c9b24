internal import CNats

/// A plain NATS subscription whose messages are handed to a closure on the client library's delivery
/// threads (with ``JetStream/init(servers:name:timeout:security:sharedDelivery:)``'s `sharedDelivery`, the
/// library's shared pool: one thread however many subscriptions; else a thread of its own). It takes every
/// message sent to it (no bound on those waiting). Ends when released: the closure is not called after
/// the last handed message returns.
public final class CallbackSubscription {
    /// What the C callback reaches through its closure pointer.
    final class Handler {
        let headers: [String]
        let body: (JetStream.Message) -> Void

        init(headers: [String], body: @escaping (JetStream.Message) -> Void) {
            self.headers = headers
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
    /// Subscribes to `subject`, handing each message (with the headers named in `headers`) to `body` on a
    /// delivery thread.
    public func subscribe(
        _ subject: String,
        headers: [String] = [],
        _ body: @escaping (Message) -> Void
    ) throws(PublishError) -> CallbackSubscription {
        let closure = Unmanaged.passRetained(CallbackSubscription.Handler(headers: headers, body: body)).toOpaque()
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
                handler.body(JetStream.read(message, headers: handler.headers))
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
            // Without a completion callback set, the handler stays (it may be running): a small leak on a
            // failure that does not happen with a valid subscription.
            throw PublishError("subscribe \(subject)", status)
        }
        return CallbackSubscription(subscription, owner: self)
    }
}
