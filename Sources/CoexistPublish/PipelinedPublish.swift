internal import CNats
import FoundationEssentials

#if canImport(Glibc)
internal import Glibc
#endif

extension JetStream {
    /// One message of a pipelined window.
    public struct Outgoing: Sendable {
        public var subject: String
        public var data: [UInt8]
        /// The id the server's duplicate window knows it by.
        public var messageID: String
        public var headers: [(String, String)]

        /// A message.
        public init(subject: String, data: [UInt8], messageID: String, headers: [(String, String)]) {
            self.subject = subject
            self.data = data
            self.messageID = messageID
            self.headers = headers
        }
    }

    /// What became of one message of a window.
    public enum Outcome: Sendable, Equatable {
        /// Stored (or a duplicate of a stored one).
        case acknowledged(Ack)
        /// Refused by the server: JetStream's error code and description.
        case refused(code: Int, description: String)
        /// No answer within the timeout (the server or the connection away), or never sent.
        case unanswered
    }

    /// The error code of a message whose previous message is not the stream's last.
    public static let wrongLastMessageID = 10_070

    /// Publishes `window` without waiting for each acknowledgement, then waits for them all (the timeout
    /// runs from the last reply to a message of it: a window that is being acknowledged is never cut short
    /// by its size); returns each message's outcome, in order. A ``PublishPipeline`` sending them all, then collecting
    /// until none is in flight: see it for what the outcomes mean and why the stream never holds a gap. Not
    /// while another pipeline on this connection has messages in flight: they share its reply inbox.
    public func publish(window: [Outgoing], stream: String) throws(PublishError) -> [Outcome] {
        let pipeline = try PublishPipeline(self, stream: stream)
        var outcomes: [Outcome] = []
        outcomes.reserveCapacity(window.count)
        for outgoing in window {
            // A message that cannot be sent (the connection is away) ends the window: the rest are unanswered.
            // The first one's status is the window's failure.
            guard try pipeline.send(outgoing) else {
                if pipeline.inFlight == 0 { throw pipeline.sendFailure }
                break
            }
        }
        while pipeline.inFlight > 0 {
            let answered = try pipeline.collect(timeout: timeout)
            guard !answered.isEmpty else { break }
            outcomes += answered
        }
        outcomes += [Outcome](repeating: .unanswered, count: window.count - outcomes.count)
        return outcomes
    }

    /// Sends `outgoing` with its id, `Nats-Expected-Last-Msg-Id: expecting` (when given) and its headers,
    /// the reply going to `reply`; the client's status (an error building the message is thrown). The
    /// message is added to `spent`, for the caller to release.
    func send(
        _ outgoing: Outgoing,
        reply: String,
        expecting: String?,
        spent: inout [OpaquePointer]
    ) throws(PublishError) -> natsStatus {
        // Strings go to the client through `withCString`, which passes a native string's own bytes: passed as
        // arguments, each would be copied into a new array first (a fifth of the publisher's time, measured).
        var message: OpaquePointer?
        var status = outgoing.subject.withCString { subjectText in
            reply.withCString { replyText in
                outgoing.data.withUnsafeBufferPointer { bytes in
                    natsMsg_Create(
                        &message,
                        subjectText,
                        replyText,
                        bytes.baseAddress.map { UnsafeRawPointer($0) },
                        Int32(bytes.count)
                    )
                }
            }
        }
        guard status == NATS_OK, let message else { throw PublishError("message", status) }
        spent.append(message)
        status = Self.setHeader(message, "Nats-Msg-Id", outgoing.messageID)
        if status == NATS_OK, let expecting {
            status = Self.setHeader(message, "Nats-Expected-Last-Msg-Id", expecting)
        }
        for (name, value) in outgoing.headers where status == NATS_OK {
            status = Self.setHeader(message, name, value)
        }
        guard status == NATS_OK else { throw PublishError("headers", status) }
        return natsConnection_PublishMsg(connection, message)
    }

    /// Sets the header `name` of `message` to `value`.
    private static func setHeader(_ message: OpaquePointer, _ name: String, _ value: String) -> natsStatus {
        name.withCString { name in value.withCString { value in natsMsgHeader_Set(message, name, value) } }
    }

    /// The number after the last `.` of a reply subject (`<inbox>.<number>`: digits only, at most 20, as the
    /// inboxes of ``PublishPipeline`` make them), read from its UTF-8; nil for anything else.
    static func replyNumber(_ subject: String) -> UInt64? {
        let bytes = subject.utf8
        let start = bytes.lastIndex(of: UInt8(ascii: ".")).map(bytes.index(after:)) ?? bytes.startIndex
        var number: UInt64 = 0
        var digits = 0
        for byte in bytes[start...] {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), digits < 20 else { return nil }
            let (shifted, overflow) = number.multipliedReportingOverflow(by: 10)
            let (sum, carry) = shifted.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
            guard !overflow, !carry else { return nil }
            number = sum
            digits += 1
        }
        return digits > 0 ? number : nil
    }

    /// The next reply on `inbox` within `timeout` milliseconds (0: one already there): its number (nil when
    /// the client kept no subject: a no-responders reply) and what it says; nil when none came. The client
    /// library's message is added to `spent`, for the caller to release.
    func nextReply(
        _ inbox: (prefix: String, subscription: Subscription),
        timeout: Int64,
        stream: String,
        spent: inout [OpaquePointer]
    ) throws(PublishError) -> (number: UInt64?, outcome: Outcome)? {
        guard timeout >= 0, let reply = try inbox.subscription.reply(timeout: timeout, spent: &spent) else {
            return nil
        }
        switch reply {
        case .message(let message):
            return (Self.replyNumber(message.subject), Self.outcome(message.data, stream: stream))
        case .noResponders(let subject):
            // The client keeps no message for it (nil subject): it is the first unanswered message's.
            return (
                subject.flatMap(Self.replyNumber),
                .refused(code: 503, description: "no stream takes the subject")
            )
        }
    }

    /// The outcome a JetStream reply says: `{"stream":…,"seq":N,"duplicate":true}` or `{"error":{…}}`;
    /// an empty reply (no responders: no stream takes the subject) is a refusal with code 503.
    static func outcome(_ data: [UInt8], stream: String) -> Outcome {
        guard !data.isEmpty else { return .refused(code: 503, description: "no stream takes the subject") }
        guard let ack = plainAck(data) else { return decodedOutcome(data, stream: stream) }
        guard ack.stream == stream, ack.sequence > 0 else {
            return .refused(code: 0, description: "not stored: \(String(decoding: data.prefix(200), as: UTF8.self))")
        }
        return .acknowledged(Ack(sequence: ack.sequence, duplicate: ack.duplicate))
    }

    /// The outcome of a non-empty reply read with a JSON decoder (the replies ``plainAck(_:)`` does not read).
    static func decodedOutcome(_ data: [UInt8], stream: String) -> Outcome {
        struct Reply: Decodable {
            struct Failure: Decodable {
                var code: Int?
                var err_code: Int?
                var description: String?
            }
            var stream: String?
            var seq: UInt64?
            var duplicate: Bool?
            var error: Failure?
        }
        guard let reply = try? JSONDecoder().decode(Reply.self, from: Data(data)) else {
            return .refused(code: 0, description: String(decoding: data.prefix(200), as: UTF8.self))
        }
        if let error = reply.error {
            return .refused(code: error.err_code ?? error.code ?? 0, description: error.description ?? "")
        }
        guard reply.stream == stream, let sequence = reply.seq, sequence > 0 else {
            return .refused(
                code: 0,
                description: "not stored: \(String(decoding: data.prefix(200), as: UTF8.self))"
            )
        }
        return .acknowledged(Ack(sequence: sequence, duplicate: reply.duplicate ?? false))
    }

    /// An acknowledgement as the server writes it (`{"stream":"S", "seq":1,"duplicate": true}`, spaces
    /// included), read without a JSON decoder (one per message: a decoder took 30 µs): a flat object of
    /// string (without escapes), unsigned integer and boolean values with `stream` and `seq`, JSON
    /// whitespace between its tokens. Nil for anything else (an error, another shape), which the decoder
    /// reads.
    static func plainAck(_ data: [UInt8]) -> (stream: String, sequence: UInt64, duplicate: Bool)? {
        var stream: String?
        var sequence: UInt64?
        var duplicate = false
        var index = 0
        func next() -> UInt8? { index < data.count ? data[index] : nil }
        func skipSpace() {
            while let byte = next(), byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
        }
        /// A string without escapes: where its bytes are (no copy).
        func string() -> Range<Int>? {
            guard next() == UInt8(ascii: "\"") else { return nil }
            index += 1
            let start = index
            while let byte = next(), byte != UInt8(ascii: "\"") {
                guard byte != UInt8(ascii: "\\"), byte >= 0x20, byte < 0x80 else { return nil }
                index += 1
            }
            guard next() == UInt8(ascii: "\"") else { return nil }
            index += 1
            return start..<(index - 1)
        }
        func bytes(_ range: Range<Int>, are text: StaticString) -> Bool {
            range.count == text.utf8CodeUnitCount
                && text.withUTF8Buffer { data[range].elementsEqual($0) }
        }
        guard next() == UInt8(ascii: "{") else { return nil }
        index += 1
        skipSpace()
        // Keys seen: a key given twice, or an error, is the decoder's to judge.
        var seen: (stream: Bool, sequence: Bool, duplicate: Bool) = (false, false, false)
        var others: [Range<Int>] = []
        while true {
            guard let key = string() else { return nil }
            let isStream = bytes(key, are: "stream")
            let isSequence = bytes(key, are: "seq")
            let isDuplicate = bytes(key, are: "duplicate")
            if isStream {
                guard !seen.stream else { return nil }
                seen.stream = true
            } else if isSequence {
                guard !seen.sequence else { return nil }
                seen.sequence = true
            } else if isDuplicate {
                guard !seen.duplicate else { return nil }
                seen.duplicate = true
            } else {
                // An acknowledgement has a few keys: a reply with more than 16 others (a forged one) is the
                // decoder's.
                guard !bytes(key, are: "error"), others.count < 16,
                    !others.contains(where: { data[$0].elementsEqual(data[key]) })
                else { return nil }
                others.append(key)
            }
            skipSpace()
            guard next() == UInt8(ascii: ":") else { return nil }
            index += 1
            skipSpace()
            switch next() {
            case UInt8(ascii: "\""):
                guard let value = string(), !isSequence, !isDuplicate else { return nil }
                if isStream { stream = String(decoding: data[value], as: UTF8.self) }
            case UInt8(ascii: "t"), UInt8(ascii: "f"):
                let flag = next() == UInt8(ascii: "t")
                let word: StaticString = flag ? "true" : "false"
                let end = index + word.utf8CodeUnitCount
                guard end <= data.count, bytes(index..<end, are: word), !isStream, !isSequence else { return nil }
                index = end
                if isDuplicate { duplicate = flag }
            case let byte? where byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"):
                // No leading zero (not JSON), and only `seq` is a number.
                guard !isStream, !isDuplicate,
                    byte != UInt8(ascii: "0") || index + 1 >= data.count
                        || !(data[index + 1] >= UInt8(ascii: "0") && data[index + 1] <= UInt8(ascii: "9"))
                else { return nil }
                var number: UInt64 = 0
                while let digit = next(), digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") {
                    let (times, overflow) = number.multipliedReportingOverflow(by: 10)
                    let (sum, carry) = times.addingReportingOverflow(UInt64(digit - UInt8(ascii: "0")))
                    guard !overflow, !carry else { return nil }
                    number = sum
                    index += 1
                }
                if isSequence { sequence = number }
            default:
                return nil
            }
            skipSpace()
            switch next() {
            case UInt8(ascii: ","):
                index += 1
                skipSpace()
            case UInt8(ascii: "}"):
                index += 1
                guard index == data.count, let stream, let sequence else { return nil }
                return (stream, sequence, duplicate)
            default: return nil
            }
        }
    }

    static func monotonicMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000 + Int64(now.tv_nsec) / 1_000_000
    }
}
