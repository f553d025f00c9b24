internal import CNats

/// A JetStream pull consumer: messages a stream stored, fetched in batches as a consumer on another machine
/// reads them (the benchmark's delivery measurement). It acknowledges nothing. Not thread-safe: one owner
/// reads it.
public final class PullSubscription {
    private let subscription: OpaquePointer
    /// Keeps the connection open while the subscription lives.
    private let owner: JetStream

    init(_ subscription: OpaquePointer, owner: JetStream) {
        self.subscription = subscription
        self.owner = owner
    }

    deinit {
        // Unsubscribing deletes the durable consumer on the server.
        natsSubscription_Unsubscribe(subscription)
        natsSubscription_Destroy(subscription)
    }

    /// Up to `batch` messages with the headers named in `headers`, waiting up to `timeout` milliseconds for
    /// them; empty when none came in time.
    public func fetch(
        batch: Int,
        timeout: Int64,
        headers names: [String] = []
    ) throws(PublishError) -> [JetStream.Message] {
        var list = natsMsgList()
        var code = jsErrCode(0)
        let status = natsSubscription_Fetch(&list, subscription, Int32(clamping: max(1, batch)), timeout, &code)
        defer { natsMsgList_Destroy(&list) }
        var messages: [JetStream.Message] = []
        if let array = list.Msgs {
            for index in 0..<Int(max(0, list.Count)) {
                if let message = array[index] { messages.append(JetStream.read(message, headers: names)) }
            }
        }
        // A timeout with messages is the end of a short batch; without, nothing came.
        guard status == NATS_OK || status == NATS_TIMEOUT else { throw PublishError("fetch", status, code) }
        return messages
    }
}

extension JetStream {
    /// A pull subscription on `stream` for `subject` as the durable consumer `durable`, from the next
    /// message stored on.
    public func pullSubscribe(stream: String, subject: String, durable: String) throws(PublishError) -> PullSubscription
    {
        var subscription: OpaquePointer?
        var code = jsErrCode(0)
        let status = coexist_js_pull_subscribe(&subscription, context, stream, subject, durable, &code)
        guard status == NATS_OK, let subscription else {
            throw PublishError("pull subscribe \(stream) \(subject)", status, code)
        }
        return PullSubscription(subscription, owner: self)
    }

    /// Makes a push consumer on `stream` for `subject` that sends every message stored from now on to the
    /// subject `deliver`, acknowledging nothing; a plain ``Subscription`` on `deliver` (made first: the
    /// server removes a push consumer nobody listens to) reads them.
    public func addPushConsumer(stream: String, subject: String, deliver: String) throws(PublishError) {
        var code = jsErrCode(0)
        let status = coexist_js_add_push_consumer(context, stream, subject, deliver, &code)
        guard status == NATS_OK else { throw PublishError("push consumer \(stream) → \(deliver)", status, code) }
    }
}
