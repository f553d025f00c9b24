internal import CNats

#if canImport(Glibc)
internal import Glibc
#endif

/// A durable JetStream pull consumer read message by message, as a consumer on another machine reads the
/// stream (the benchmark's delivery measurement).
///
/// It keeps a pull request waiting on the server (`$JS.API.CONSUMER.MSG.NEXT.STREAM.CONSUMER`, for up to
/// `batch` messages, expiring after `expiry`), so each message the stream stores is sent on as soon as it is
/// stored and handed over one at a time: a batch is never waited for until it is full. The next request
/// goes when the server has sent the whole batch (the reader's next call), when it ends the request (`408`:
/// expired), when the connection reconnected (the server forgets a request whose requester went away), or
/// when the request outlived its expiry by a second. Each request has a reply subject of its own, so a late
/// word about an earlier request is passed over. The client library's own fetch asks first whether anything
/// is there, then waits until its batch is full or its wait is over.
///
/// It acknowledges nothing (the consumer is made so). Releasing it deletes the consumer when it made it. Not
/// thread-safe: one owner reads it.
public final class PullSubscription {
    private let inbox: Subscription
    private let inboxPrefix: String
    private let requestSubject: String
    private let stream: String
    private let durable: String
    private let request: [UInt8]
    private let expiry: Int64
    private let batch: Int
    /// Whether this subscription made the consumer (and deletes it when released).
    private var madeConsumer = false
    /// The waiting request's number, the messages it may still send, and when it is deemed lost (monotonic
    /// milliseconds).
    private var current: UInt64 = 0
    private var remaining = 0
    private var requestDeadline: Int64 = 0
    /// The connection's reconnections when the waiting request was sent.
    private var reconnects: UInt64 = 0
    private let statistics: OpaquePointer
    /// Keeps the connection open while the subscription lives.
    private let owner: JetStream

    init(owner: JetStream, stream: String, durable: String, batch: Int, expiry: Int64) throws(PublishError) {
        self.owner = owner
        self.stream = stream
        self.durable = durable
        self.batch = max(1, batch)
        self.expiry = max(100, expiry)
        inboxPrefix = "_INBOX.coexist.pull.\(UInt64.random(in: 0...UInt64.max))"
        requestSubject = "$JS.API.CONSUMER.MSG.NEXT.\(stream).\(durable)"
        request = Array(#"{"batch":\#(self.batch),"expires":\#(self.expiry * 1_000_000)}"#.utf8)
        var statistics: OpaquePointer?
        let status = natsStatistics_Create(&statistics)
        guard status == NATS_OK, let statistics else { throw PublishError("statistics", status) }
        self.statistics = statistics
        inbox = try owner.subscribe(inboxPrefix + ".*")
    }

    deinit {
        if madeConsumer { owner.deleteConsumer(durable, of: stream) }
        natsStatistics_Destroy(statistics)
    }

    /// Makes the durable consumer for `subject` unless it exists (then it is read as it is, and kept).
    func attach(subject: String) throws(PublishError) {
        if try owner.waitingRequests(stream: stream, consumer: durable) != nil { return }
        var code = jsErrCode(0)
        let status = coexist_js_add_consumer(owner.context, stream, subject, durable, nil, &code)
        guard status == NATS_OK else { throw PublishError("pull consumer \(stream) \(subject)", status, code) }
        madeConsumer = true
    }

    /// The next message with the headers named in `headers`, waiting up to `timeout` milliseconds; nil when
    /// none came in time (or the connection is away meanwhile). Throws when the server refuses the
    /// consumer's requests (`409`: the consumer was deleted, too many requests wait) or the connection is
    /// closed.
    public func next(timeout: Int64, headers names: [String] = []) throws(PublishError) -> JetStream.Message? {
        let deadline = JetStream.monotonicMilliseconds() + max(0, timeout)
        while true {
            var now = JetStream.monotonicMilliseconds()
            if remaining == 0 || now >= requestDeadline {
                guard try sendRequest() else {
                    // The connection is away (reconnecting): tried again shortly, within the wait.
                    guard now < deadline else { return nil }
                    usleep(UInt32(min(20, deadline - now)) * 1_000)
                    continue
                }
                now = JetStream.monotonicMilliseconds()
            }
            guard now < deadline else { return nil }
            // At most 250 ms at a time: a reconnection (which loses the request) is looked for in between.
            let wait = max(1, min(deadline, requestDeadline, now + 250) - now)
            guard let message = try inbox.next(timeout: wait, headers: names + ["Status", "Description"]) else {
                // Nothing came: a reconnection lost the waiting request.
                if coexist_reconnects(owner.connection, statistics) != reconnects { remaining = 0 }
                continue
            }
            // A status has no payload; a stored message may carry a header of that name.
            guard message.data.isEmpty, let status = message.headers["Status"] else {
                remaining = max(0, remaining - 1)
                var headers = message.headers
                if !names.contains("Status") { headers["Status"] = nil }
                if !names.contains("Description") { headers["Description"] = nil }
                return JetStream.Message(subject: message.subject, data: message.data, headers: headers)
            }
            // About an earlier request (it ended after the next one was sent): passed over.
            guard message.subject == "\(inboxPrefix).\(current)" else { continue }
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

    /// Sends the next request; false when the connection is away (reconnecting).
    private func sendRequest() throws(PublishError) -> Bool {
        current += 1
        reconnects = coexist_reconnects(owner.connection, statistics)
        let status = request.withUnsafeBufferPointer { bytes in
            natsConnection_PublishRequest(
                owner.connection,
                requestSubject,
                "\(inboxPrefix).\(current)",
                bytes.baseAddress.map { UnsafeRawPointer($0) },
                Int32(bytes.count)
            )
        }
        guard status == NATS_OK else {
            if natsConnection_IsClosed(owner.connection) {
                throw PublishError("pull request \(stream) \(durable)", status)
            }
            remaining = 0
            return false
        }
        remaining = batch
        // The server ends the request at its expiry and says so; a second more and it is deemed lost.
        requestDeadline = JetStream.monotonicMilliseconds() + expiry + 1_000
        return true
    }
}

extension JetStream {
    /// A pull subscription on `stream` for `subject` as the durable consumer `durable` (made here, from the
    /// next message stored on, and deleted when the subscription is released; an existing one is read from
    /// where it is, and kept), asking for `batch` messages at a time, each request expiring after `expiry`
    /// milliseconds (at least 100).
    public func pullSubscribe(
        stream: String,
        subject: String,
        durable: String,
        batch: Int = 256,
        expiry: Int64 = 5_000
    ) throws(PublishError) -> PullSubscription {
        let subscription = try PullSubscription(
            owner: self,
            stream: stream,
            durable: durable,
            batch: batch,
            expiry: expiry
        )
        try subscription.attach(subject: subject)
        return subscription
    }

    /// The pull requests waiting on the consumer `consumer` of `stream`; nil when there is no such consumer.
    public func waitingRequests(stream: String, consumer: String) throws(PublishError) -> Int? {
        var waiting: Int64 = 0
        var code = jsErrCode(0)
        let status = coexist_js_consumer_waiting(context, stream, consumer, &waiting, &code)
        if status == NATS_NOT_FOUND || code.rawValue == 10_014 { return nil }
        guard status == NATS_OK else { throw PublishError("consumer \(stream) \(consumer)", status, code) }
        return Int(waiting)
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
        let status = coexist_js_add_consumer(context, stream, subject, nil, deliver, &code)
        guard status == NATS_OK else { throw PublishError("push consumer \(stream) → \(deliver)", status, code) }
    }
}
