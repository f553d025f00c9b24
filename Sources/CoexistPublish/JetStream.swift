internal import CNats

#if canImport(Glibc)
internal import Glibc
#endif

/// A failure of the NATS client or of the JetStream server: the client's status text and, for a request
/// the server refused, JetStream's error code (`10059`: stream not found, …).
public struct PublishError: Error, Sendable, CustomStringConvertible {
    /// What failed (`connect`, `publish`, …).
    public let operation: String
    /// The client library's status text.
    public let status: String
    /// The server's JetStream error code, 0 when there is none.
    public let code: Int
    /// Whether the server never answered (down, unreachable, timed out): worth retrying.
    public let unavailable: Bool

    public var description: String {
        "NATS \(operation): \(status)" + (code != 0 ? " (JetStream error \(code))" : "")
    }

    init(_ operation: String, _ status: natsStatus, _ code: jsErrCode = jsErrCode(0)) {
        self.operation = operation
        self.status = String(cString: natsStatus_GetText(status))
        self.code = Int(code.rawValue)
        unavailable = [NATS_NO_SERVER, NATS_TIMEOUT, NATS_CONNECTION_CLOSED, NATS_NO_RESPONDERS].contains(status)
    }

    /// A failure described by `message`; `unavailable` when the server did not answer.
    public init(_ operation: String, message: String, code: Int = 0, unavailable: Bool = false) {
        self.operation = operation
        status = message
        self.code = code
        self.unavailable = unavailable
    }
}

/// One connection to a NATS server (or cluster) with JetStream, through Debian's `libnats` (the official C
/// client): streams created or checked, messages published with a message id and acknowledged, and
/// read back by sequence. Not thread-safe: one owner uses it.
public final class JetStream {
    /// The server's acknowledgement of a publish.
    public struct Ack: Sendable, Equatable {
        /// The message's sequence in the stream.
        public let sequence: UInt64
        /// The server had the message id in its duplicate window: this copy was dropped.
        public let duplicate: Bool

        /// An acknowledgement.
        public init(sequence: UInt64, duplicate: Bool) {
            self.sequence = sequence
            self.duplicate = duplicate
        }
    }

    /// A message read back from a stream.
    public struct Message: Sendable {
        /// Its subject.
        public let subject: String
        /// Its payload.
        public let data: [UInt8]
        /// Its headers, for the names asked for.
        public let headers: [String: String]
    }

    let connection: OpaquePointer
    let context: OpaquePointer
    /// How long a request (a publish's ack, a stream query) may take, in milliseconds.
    public let timeout: Int64
    /// The reply subscription of pipelined publishes, and the number of the next reply subject.
    var inbox: (prefix: String, subscription: Subscription)?
    var nextReply: UInt64 = 1

    /// How the client proves who it is and checks the server.
    public struct Security: Sendable, Equatable {
        /// A NATS credentials file (user JWT and seed).
        public var credentials: String?
        /// CA certificates to trust (PEM); setting it requires TLS.
        public var caFile: String?
        /// The client's certificate chain and private key (PEM), for servers that verify clients.
        public var certificateFile: String?
        public var keyFile: String?

        /// Security settings; all nil: none.
        public init(
            credentials: String? = nil,
            caFile: String? = nil,
            certificateFile: String? = nil,
            keyFile: String? = nil
        ) {
            self.credentials = credentials
            self.caFile = caFile
            self.certificateFile = certificateFile
            self.keyFile = keyFile
        }
    }

    /// Connects to the first of `servers` that answers (`nats://127.0.0.1:4222`; the others are tried on
    /// reconnection), as `name`. `timeout` (milliseconds) bounds the connection and every request. With
    /// `sharedDelivery`, the messages of its ``CallbackSubscription``s are handed on the client library's
    /// shared delivery thread, not on a thread per subscription.
    public init(
        servers: [String],
        name: String,
        timeout: Int64 = 5_000,
        security: Security = Security(),
        sharedDelivery: Bool = false
    ) throws(PublishError) {
        guard !servers.isEmpty else { throw PublishError("connect", message: "no server given") }
        var options: OpaquePointer?
        var status = natsOptions_Create(&options)
        guard status == NATS_OK, let options else { throw PublishError("options", status) }
        defer { natsOptions_Destroy(options) }
        status = Self.withCStrings(servers) { pointers in
            natsOptions_SetServers(options, pointers, Int32(servers.count))
        }
        guard status == NATS_OK else { throw PublishError("servers", status) }
        if let credentials = security.credentials {
            status = natsOptions_SetUserCredentialsFromFiles(options, credentials, nil)
            guard status == NATS_OK else { throw PublishError("credentials \(credentials)", status) }
        }
        if let caFile = security.caFile {
            status = natsOptions_SetSecure(options, true)
            if status == NATS_OK { status = natsOptions_LoadCATrustedCertificates(options, caFile) }
            // The server's certificate must name the host connected to (the client checks it only when told).
            if status == NATS_OK, let host = servers.first.flatMap(Self.host) {
                status = natsOptions_SetExpectedHostname(options, host)
            }
            guard status == NATS_OK else { throw PublishError("TLS CA \(caFile)", status) }
        }
        if let certificateFile = security.certificateFile, let keyFile = security.keyFile {
            status = natsOptions_LoadCertificatesChain(options, certificateFile, keyFile)
            guard status == NATS_OK else { throw PublishError("TLS certificate \(certificateFile)", status) }
        }
        _ = natsOptions_SetName(options, name)
        // The servers in the order given: the first is preferred, the others are tried when it fails.
        _ = natsOptions_SetNoRandomize(options, true)
        // Each publish is written to the socket at once, not by the client's flusher thread (a thread hop on
        // every message: milliseconds on a loaded machine).
        _ = natsOptions_SetSendAsap(options, true)
        _ = natsOptions_SetTimeout(options, timeout)
        // Reconnection is the client's: forever, every 250 ms; publishes fail meanwhile and are retried.
        _ = natsOptions_SetMaxReconnect(options, -1)
        _ = natsOptions_SetReconnectWait(options, 250)
        // Nothing is buffered while reconnecting (publishes fail at once): a copy sent after the reconnection,
        // behind the publisher's back, could otherwise reach the stream after what it publishes again.
        _ = natsOptions_SetReconnectBufSize(options, 1)
        if sharedDelivery { _ = natsOptions_UseGlobalMessageDelivery(options, true) }
        var connection: OpaquePointer?
        status = natsConnection_Connect(&connection, options)
        guard status == NATS_OK, let connection else { throw PublishError("connect", status) }
        var context: OpaquePointer?
        status = coexist_js_context(&context, connection, timeout)
        guard status == NATS_OK, let context else {
            natsConnection_Destroy(connection)
            throw PublishError("JetStream", status)
        }
        self.connection = connection
        self.context = context
        self.timeout = timeout
    }

    deinit {
        inbox = nil
        jsCtx_Destroy(context)
        natsConnection_Close(connection)
        natsConnection_Destroy(connection)
    }

    /// Creates the stream `name` taking `subject`, or checks that the existing one takes it. A stream of
    /// that name holding other subjects is an error (it is never changed). Returns whether it was created.
    /// A stream it creates takes messages of at most `maximumMessageSize` bytes when one is given.
    @discardableResult
    public func ensureStream(
        _ name: String,
        subject: String,
        replicas: Int = 1,
        duplicateWindowSeconds: Int = 120,
        maximumMessageSize: Int32? = nil
    ) throws(PublishError) -> Bool {
        var code = jsErrCode(0)
        var mismatch = false
        var created = false
        let status = coexist_js_ensure_stream(
            context,
            name,
            subject,
            Int64(replicas),
            Int64(duplicateWindowSeconds) * 1_000_000_000,
            maximumMessageSize ?? -1,
            &code,
            &mismatch,
            &created
        )
        guard status == NATS_OK else { throw PublishError("stream \(name)", status, code) }
        guard !mismatch else {
            throw PublishError("stream \(name)", message: "the stream exists and does not take subject \(subject)")
        }
        return created
    }

    /// Publishes `data` on `subject` with `headers`; `messageID` lets the server drop a copy it has had
    /// within its duplicate window. Returns once the server has stored it (its ack).
    public func publish(
        subject: String,
        data: [UInt8],
        messageID: String,
        headers: [(String, String)] = []
    ) throws(PublishError) -> Ack {
        var message: OpaquePointer?
        var status = data.withUnsafeBufferPointer { bytes in
            natsMsg_Create(&message, subject, nil, bytes.baseAddress.map { UnsafeRawPointer($0) }, Int32(bytes.count))
        }
        guard status == NATS_OK, let message else { throw PublishError("message", status) }
        defer { natsMsg_Destroy(message) }
        for (name, value) in headers {
            status = natsMsgHeader_Set(message, name, value)
            guard status == NATS_OK else { throw PublishError("header \(name)", status) }
        }
        var sequence: UInt64 = 0
        var duplicate = false
        var code = jsErrCode(0)
        status = coexist_js_publish(context, message, messageID, timeout, &sequence, &duplicate, &code)
        guard status == NATS_OK else { throw PublishError("publish", status, code) }
        return Ack(sequence: sequence, duplicate: duplicate)
    }

    /// The largest message (headers and payload) the stream `name` takes, nil when it sets no limit of its
    /// own (the server's maximum payload still applies).
    public func maximumMessageSize(of name: String) throws(PublishError) -> Int? {
        try info(of: name).maximumMessageSize
    }

    /// The stream's number of messages and last sequence.
    public func state(of stream: String) throws(PublishError) -> (messages: UInt64, lastSequence: UInt64) {
        let bounds = try bounds(of: stream)
        return (bounds.messages, bounds.last)
    }

    /// The stream's number of messages and its first and last sequence.
    public func bounds(of stream: String) throws(PublishError) -> (messages: UInt64, first: UInt64, last: UInt64) {
        let info = try info(of: stream)
        return (info.messages, info.first, info.last)
    }

    /// What the server says of `stream`: its messages, first and last sequence, and its own message limit.
    private func info(
        of stream: String
    ) throws(PublishError) -> (messages: UInt64, first: UInt64, last: UInt64, maximumMessageSize: Int?) {
        var messages: UInt64 = 0
        var first: UInt64 = 0
        var last: UInt64 = 0
        var size: Int32 = -1
        var code = jsErrCode(0)
        let status = coexist_js_stream_state(context, stream, &messages, &first, &last, &size, &code)
        guard status == NATS_OK else { throw PublishError("stream \(stream)", status, code) }
        return (messages, first, last, size > 0 ? Int(size) : nil)
    }

    /// JetStream's error code for a message that is not in the stream (deleted, purged or expired).
    public static let noMessageFound = 10_037

    /// The last message of `stream` whose subject matches `subject` (wildcards allowed), with the headers
    /// named in `headers`; nil when there is none (never published, purged, or expired).
    public func lastMessage(
        _ stream: String,
        subject: String,
        headers names: [String] = []
    ) throws(PublishError) -> Message? {
        var message: OpaquePointer?
        var found = false
        var code = jsErrCode(0)
        let status = coexist_js_last_message(&message, context, stream, subject, &found, &code)
        guard status == NATS_OK else { throw PublishError("last message of \(stream)", status, code) }
        guard found, let message else { return nil }
        defer { natsMsg_Destroy(message) }
        return Self.read(message, headers: names)
    }

    /// Deletes the message at `sequence` of `stream` (an operator's act; the tests use it).
    public func deleteMessage(_ stream: String, sequence: UInt64) throws(PublishError) {
        var code = jsErrCode(0)
        let status = js_DeleteMsg(context, stream, sequence, nil, &code)
        guard status == NATS_OK else { throw PublishError("delete \(stream) #\(sequence)", status, code) }
    }

    /// The largest payload the server takes, in bytes.
    public var maximumPayload: Int { Int(natsConnection_GetMaxPayload(connection)) }

    /// The message at `sequence` of `stream`, with the headers named in `headers`.
    public func message(
        _ stream: String,
        sequence: UInt64,
        headers names: [String] = []
    ) throws(PublishError) -> Message {
        var message: OpaquePointer?
        var code = jsErrCode(0)
        let status = js_GetMsg(&message, context, stream, sequence, nil, &code)
        guard status == NATS_OK, let message else { throw PublishError("get \(stream) #\(sequence)", status, code) }
        defer { natsMsg_Destroy(message) }
        return Self.read(message, headers: names)
    }

    /// A copy of `message`'s subject, payload (unless not `payload`) and the headers named in `names`.
    static func read(_ message: OpaquePointer, headers names: [String], payload: Bool = true) -> Message {
        let count = payload ? Int(natsMsg_GetDataLength(message)) : 0
        var data: [UInt8] = []
        if count > 0, let bytes = natsMsg_GetData(message) {
            data = bytes.withMemoryRebound(to: UInt8.self, capacity: count) {
                Array(UnsafeBufferPointer(start: $0, count: count))
            }
        }
        var headers: [String: String] = [:]
        for name in names {
            var value: UnsafePointer<CChar>?
            if natsMsgHeader_Get(message, name, &value) == NATS_OK, let value { headers[name] = String(cString: value) }
        }
        return Message(subject: String(cString: natsMsg_GetSubject(message)), data: data, headers: headers)
    }

    /// The host of a server URL (`tls://user:secret@host:4222` → `host`).
    static func host(_ url: String) -> String? {
        guard let scheme = url.firstRange(of: "://") else { return nil }
        var rest = url[scheme.upperBound...]
        if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        if rest.hasPrefix("["), let close = rest.firstIndex(of: "]") {
            return String(rest[rest.index(after: rest.startIndex)..<close])
        }
        let host = rest.prefix { $0 != ":" && $0 != "/" }
        return host.isEmpty ? nil : String(host)
    }

    /// Calls `body` with C strings of `strings`, valid for the call.
    private static func withCStrings<R>(
        _ strings: [String],
        _ body: (UnsafeMutablePointer<UnsafePointer<CChar>?>) -> R
    ) -> R {
        let copies = strings.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        // A C array of the copies (and a terminator, so it is never empty), freed after the call.
        let pointers = UnsafeMutablePointer<UnsafePointer<CChar>?>.allocate(capacity: copies.count + 1)
        defer { pointers.deallocate() }
        for (index, copy) in copies.enumerated() { pointers[index] = UnsafePointer(copy) }
        pointers[copies.count] = nil
        return body(pointers)
    }
}
