internal import CNats

/// A durable JetStream pull consumer read message by message, as a consumer on another machine reads the
/// stream (the benchmark's delivery measurement).
///
/// It keeps one pull request waiting on the server (`$JS.API.CONSUMER.MSG.NEXT.STREAM.CONSUMER`, for up to
/// `batch` messages, expiring after `expiry`), so each message the stream stores is sent on as soon as it is
/// stored, one at a time: a batch is never waited for until it is full. The next request goes when the
/// server has sent the whole batch, when it ends the request (`408`: expired), or when the request outlived
/// its expiry by a second (lost with a connection). The client library's own fetch asks first whether
/// anything is there, then waits until its batch is full: a round trip per batch, and messages held back
/// while it fills.
///
/// It acknowledges nothing (the consumer is made so). Releasing it deletes the consumer. Not thread-safe:
/// one owner reads it.
public final class PullSubscription {
    private let inbox: Subscription
    private let inboxSubject: String
    private let requestSubject: String
    private let stream: String
    private let durable: String
    private let request: [UInt8]
    private let expiry: Int64
    private let batch: Int
    /// Messages the waiting request may still send, and when it is deemed lost (monotonic milliseconds).
    private var remaining = 0
    private var requestDeadline: Int64 = 0
    /// Keeps the connection open while the subscription lives.
    private let owner: JetStream

    init(owner: JetStream, stream: String, durable: String, batch: Int, expiry: Int64) throws(PublishError) {
        self.owner = owner
        self.stream = stream
        self.durable = durable
        self.batch = max(1, batch)
        self.expiry = max(100, expiry)
        inboxSubject = "_INBOX.coexist.pull.\(UInt64.random(in: 0...UInt64.max))"
        requestSubject = "$JS.API.CONSUMER.MSG.NEXT.\(stream).\(durable)"
        request = Array(#"{"batch":\#(self.batch),"expires":\#(self.expiry * 1_000_000)}"#.utf8)
        inbox = try owner.subscribe(inboxSubject)
    }

    deinit {
        owner.deleteConsumer(durable, of: stream)
    }

    /// The next message with the headers named in `headers`, waiting up to `timeout` milliseconds; nil when
    /// none came in time. Throws when the server refuses the consumer's requests (`409`: the consumer was
    /// deleted, too many requests wait) or the connection fails.
    public func next(timeout: Int64, headers names: [String] = []) throws(PublishError) -> JetStream.Message? {
        let deadline = JetStream.monotonicMilliseconds() + max(0, timeout)
        while true {
            var now = JetStream.monotonicMilliseconds()
            if remaining == 0 || now >= requestDeadline {
                try sendRequest()
                now = JetStream.monotonicMilliseconds()
            }
            guard now < deadline else { return nil }
            let wait = max(1, min(deadline, requestDeadline) - now)
            guard let message = try inbox.next(timeout: wait, headers: names + ["Status", "Description"]) else {
                continue
            }
            guard let status = message.headers["Status"] else {
                remaining = max(0, remaining - 1)
                var headers = message.headers
                if !names.contains("Status") { headers["Status"] = nil }
                if !names.contains("Description") { headers["Description"] = nil }
                return JetStream.Message(subject: message.subject, data: message.data, headers: headers)
            }
            switch status {
            case "100":
                continue  // a heartbeat (none is asked for)
            case "404", "408":
                remaining = 0  // the request ended (expired): the next one goes
            default:
                throw PublishError(
                    "pull \(stream) \(durable)",
                    message: "status \(status) \(message.headers["Description"] ?? "")"
                )
            }
        }
    }

    private func sendRequest() throws(PublishError) {
        let status = request.withUnsafeBufferPointer { bytes in
            natsConnection_PublishRequest(
                owner.connection,
                requestSubject,
                inboxSubject,
                bytes.baseAddress.map { UnsafeRawPointer($0) },
                Int32(bytes.count)
            )
        }
        guard status == NATS_OK else { throw PublishError("pull request \(stream) \(durable)", status) }
        remaining = batch
        // The server ends the request at its expiry and says so; a second more and it is deemed lost.
        requestDeadline = JetStream.monotonicMilliseconds() + expiry + 1_000
    }
}

extension JetStream {
    /// A pull subscription on `stream` for `subject` as the durable consumer `durable` (made here, from the
    /// next message stored on; deleted when the subscription is released), asking for `batch` messages at a
    /// time, each request expiring after `expiry` milliseconds (at least 100).
    public func pullSubscribe(
        stream: String,
        subject: String,
        durable: String,
        batch: Int = 256,
        expiry: Int64 = 30_000
    ) throws(PublishError) -> PullSubscription {
        var code = jsErrCode(0)
        let status = coexist_js_add_pull_consumer(context, stream, subject, durable, &code)
        guard status == NATS_OK else { throw PublishError("pull consumer \(stream) \(subject)", status, code) }
        return try PullSubscription(owner: self, stream: stream, durable: durable, batch: batch, expiry: expiry)
    }

    /// Deletes the consumer `name` of `stream`; a failure (the server away, the consumer gone) is passed over.
    func deleteConsumer(_ name: String, of stream: String) {
        var code = jsErrCode(0)
        _ = js_DeleteConsumer(context, stream, name, nil, &code)
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
