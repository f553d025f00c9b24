internal import CNats

/// Messages published to a stream without waiting for each acknowledgement, kept in flight across calls: a
/// publisher sends the next message as soon as it has it (within its window) and reads acknowledgements as
/// they come, instead of waiting for a whole window before it sends more.
///
/// A message sent while its predecessor is still in flight carries `Nats-Expected-Last-Msg-Id`: the
/// predecessor's id. The server stores a message only right after its predecessor, so the stream never holds
/// a message whose predecessor was lost (a gap), whatever fails: the acknowledged messages are always a
/// prefix of those sent, followed, at most, by messages refused with ``JetStream/wrongLastMessageID`` or
/// unanswered. A message another publisher stored in between (or a copy the server dropped as a duplicate)
/// makes the rest in flight refused the same way: the caller calls ``abandon()`` and sends again from the
/// first message not acknowledged. A message sent with nothing in flight expects nothing: used so, its
/// predecessor is acknowledged.
///
/// A reply counts as an acknowledgement only when it names the stream and a sequence: a replicated stream
/// answers `{"seq":0,"duplicate":true}` for an id it has seen and not stored (a copy refused or lost),
/// which is no acknowledgement. Not thread-safe: one owner uses it, and one pipeline per connection at a
/// time (they share its reply inbox).
public final class PublishPipeline {
    private let owner: JetStream
    private let stream: String
    private let inbox: (prefix: String, subscription: Subscription)
    /// The messages in flight, oldest first from `head`: their reply numbers, ids and outcomes so far.
    private var numbers: [UInt64] = []
    private var ids: [String] = []
    private var outcomes: [JetStream.Outcome] = []
    private var head = 0
    /// The client library's messages sent and replies read, released together, ``spentBatch`` messages or
    /// ``spentBytes`` of payload at a time, whichever comes first (releasing one hands it to the library's
    /// collector thread and wakes that thread when it waits: a wake-up per message otherwise, or per call of
    /// ``collect(timeout:)``, which returns as soon as the oldest message is answered).
    private var spent: [OpaquePointer] = []
    private var spentPayload = 0
    private static let spentBatch = 512
    private static let spentBytes = 1 << 20
    /// The client's status of the last message ``send(_:)`` could not send.
    private(set) var lastStatus = NATS_OK

    /// Why the last message ``send(_:)`` could not send was not sent.
    public var sendFailure: PublishError { PublishError("publish", lastStatus) }

    /// A pipeline publishing to `stream` through `owner`'s connection.
    public init(_ owner: JetStream, stream: String) throws(PublishError) {
        self.owner = owner
        self.stream = stream
        inbox = try owner.replies()
    }

    deinit { release() }

    /// Messages sent and not yet answered in order (their outcomes not yet returned by ``collect(timeout:)``).
    public var inFlight: Int { numbers.count - head }

    /// Sends `outgoing` (expecting the message before it as the stream's last when that one is in flight);
    /// false when the client could not send it (the connection is away: ``sendFailure`` says why), nothing
    /// then in flight for it. Throws when the message cannot be made.
    public func send(_ outgoing: JetStream.Outgoing) throws(PublishError) -> Bool {
        let number = owner.nextReply
        owner.nextReply += 1
        let status = try owner.send(
            outgoing,
            reply: "\(inbox.prefix).\(number)",
            expecting: inFlight > 0 ? ids.last : nil,
            spent: &spent
        )
        spentPayload += outgoing.data.count
        if spent.count >= Self.spentBatch || spentPayload >= Self.spentBytes { release() }
        guard status == NATS_OK else {
            lastStatus = status
            return false
        }
        numbers.append(number)
        ids.append(outgoing.messageID)
        outcomes.append(.unanswered)
        return true
    }

    /// Reads replies until the oldest message in flight is answered (the timeout, in milliseconds, runs from
    /// the last reply to a message in flight), then those already there; returns the outcomes of the oldest
    /// messages, in the order they were sent, as far as they are answered: empty when the oldest got no
    /// answer in time (the server or the connection away). Replies to messages no longer in flight
    /// (abandoned, or answered after a timeout) are passed over.
    public func collect(timeout: Int64) throws(PublishError) -> [JetStream.Outcome] {
        defer { if spent.count >= Self.spentBatch || spentPayload >= Self.spentBytes { release() } }
        var deadline = JetStream.monotonicMilliseconds() + timeout
        while inFlight > 0 {
            // Only what is there already once the oldest is answered: its answer is returned at once.
            let wait =
                outcomes[head] == .unanswered ? max(0, deadline - JetStream.monotonicMilliseconds()) : 0
            guard let (number, outcome) = try owner.nextReply(inbox, timeout: wait, stream: stream, spent: &spent)
            else {
                // The client times its wait by the wall clock: one set forward ends it early.
                if wait > 0, JetStream.monotonicMilliseconds() < deadline { continue }
                break
            }
            // The timeout runs again from a reply to a message in flight, not from one passed over (the
            // refusals of what was abandoned can come in a burst).
            if record(number, outcome) { deadline = JetStream.monotonicMilliseconds() + timeout }
        }
        var answered: [JetStream.Outcome] = []
        while head < numbers.count, outcomes[head] != .unanswered {
            answered.append(outcomes[head])
            head += 1
        }
        if head == numbers.count || head >= 1_024 {
            numbers.removeFirst(head)
            ids.removeFirst(head)
            outcomes.removeFirst(head)
            head = 0
        }
        return answered
    }

    /// Forgets every message in flight (one was refused or unanswered: those after it are the caller's to
    /// send again); their late replies are passed over.
    public func abandon() {
        numbers.removeAll(keepingCapacity: true)
        ids.removeAll(keepingCapacity: true)
        outcomes.removeAll(keepingCapacity: true)
        head = 0
    }

    /// Notes `outcome` for the message in flight whose reply number is `number` (nil: a reply the client kept
    /// no subject of, a no-responders reply, is the oldest unanswered message's); false when it is none of
    /// theirs (passed over).
    private func record(_ number: UInt64?, _ outcome: JetStream.Outcome) -> Bool {
        let index: Int?
        if let number {
            // Reply numbers grow with each message sent: a search over the messages in flight.
            guard let first = numbers[head...].first, number >= first, let last = numbers.last, number <= last else {
                return false
            }
            var low = head
            var high = numbers.count - 1
            while low < high {
                let middle = (low + high) / 2
                if numbers[middle] < number { low = middle + 1 } else { high = middle }
            }
            index = numbers[low] == number ? low : nil
        } else {
            index = outcomes[head...].firstIndex(of: .unanswered)
        }
        guard let index, outcomes[index] == .unanswered else { return false }
        outcomes[index] = outcome
        return true
    }

    private func release() {
        for message in spent { natsMsg_Destroy(message) }
        spent.removeAll(keepingCapacity: true)
        spentPayload = 0
    }
}
