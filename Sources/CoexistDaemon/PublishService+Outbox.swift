import CoexistPublish
import CoexistRuntime

/// Messages on their way to the stream: each sent as soon as it is queued and the window has room, while
/// earlier ones are still being acknowledged, so that the server never waits for the publisher to take in
/// a whole window's acknowledgements before it gets more.
extension PublishService {
    /// The messages queued for publishing and not yet acknowledged, in order, and where each transaction
    /// ends: once every message before an end is acknowledged, that transaction is in the stream whole.
    struct Outbox {
        private(set) var messages: [Pending] = []
        /// Messages before it are acknowledged; from it up to ``next``, in flight; from ``next`` on, queued.
        private(set) var acknowledged = 0
        private(set) var next = 0
        /// The bytes of the messages in flight.
        private(set) var bytes = 0
        /// Each queued transaction's end: the number of messages up to it, and its token.
        private var ends: [(count: Int, token: Int64)] = []
        private var endsHead = 0

        /// Queues transaction `token`'s messages (none: it is in the stream once those before it are).
        mutating func add(_ token: Int64, _ pending: [Pending]) {
            messages += pending
            ends.append((messages.count, token))
        }

        /// Nothing queued, in flight or waiting for the messages before it.
        var isEmpty: Bool { acknowledged == messages.count && endsHead == ends.count }
        var inFlight: Int { next - acknowledged }
        /// Messages queued and not sent yet.
        var unsent: Int { messages.count - next }
        /// The next message to send (there is one: ``unsent`` > 0).
        var nextToSend: Pending { messages[next] }

        /// The next message to send went: it is in flight.
        mutating func sent() {
            bytes += messages[next].outgoing.data.count
            next += 1
        }

        /// The oldest message in flight is acknowledged: where the stream then stands.
        mutating func acknowledge() -> Mark {
            let message = messages[acknowledged]
            bytes -= message.outgoing.data.count
            acknowledged += 1
            return message.mark
        }

        /// The last transaction whose messages are all acknowledged since the last call (nil: none).
        mutating func completed() -> Int64? {
            var token: Int64?
            while endsHead < ends.count, ends[endsHead].count <= acknowledged {
                token = ends[endsHead].token
                endsHead += 1
            }
            return token
        }

        /// Everything in flight is to be sent again.
        mutating func rewind() {
            next = acknowledged
            bytes = 0
        }

        /// Drops what is acknowledged and done (a long run of messages never leaves the outbox empty).
        mutating func compact() {
            guard acknowledged >= 4_096 || (acknowledged > 0 && acknowledged == messages.count) else { return }
            let dropped = acknowledged
            messages.removeFirst(dropped)
            ends.removeFirst(endsHead)
            endsHead = 0
            for index in ends.indices { ends[index].count -= dropped }
            acknowledged = 0
            next -= dropped
        }
    }

    /// Sends queued messages while the window has room, then, with messages in flight, reads their
    /// acknowledgements (waiting for the oldest's, at most the client's timeout from the last reply to one in
    /// flight), moving the mark with each and the position with each transaction done. Throws at a message
    /// that was refused or not answered in time: the mark is then on the one before it, and nothing stays in
    /// flight.
    func pump(_ outbox: inout Outbox, _ state: inout State) throws {
        do {
            try pumpOnce(&outbox, &state)
        } catch {
            state.pipeline.abandon()
            outbox.rewind()
            throw error
        }
    }

    /// Pumps until every queued message is acknowledged; throws ``Stopping`` when the daemon stops first.
    func finish(_ outbox: inout Outbox, _ state: inout State) throws {
        while !outbox.isEmpty {
            if shared.withLock({ $0.stop }) {
                state.pipeline.abandon()
                outbox.rewind()
                throw Stopping()
            }
            try pump(&outbox, &state)
        }
    }

    private func pumpOnce(_ outbox: inout Outbox, _ state: inout State) throws {
        while outbox.unsent > 0, outbox.inFlight < state.window,
            outbox.inFlight == 0 || outbox.bytes < Self.windowBytes
        {
            // Not sent (the connection is away): what is in flight is answered or times out below.
            guard try state.pipeline.send(outbox.nextToSend.outgoing) else {
                if outbox.inFlight == 0 { throw state.pipeline.sendFailure }
                break
            }
            outbox.sent()
        }
        var acknowledged = 0
        if outbox.inFlight > 0 {
            let outcomes = try state.pipeline.collect(timeout: stream.timeout)
            guard !outcomes.isEmpty else {
                throw PublishError(
                    "publish",
                    message: "no acknowledgement within \(stream.timeout) ms",
                    unavailable: true
                )
            }
            for outcome in outcomes {
                switch outcome {
                case .acknowledged:
                    state.mark = outbox.acknowledge()
                    acknowledged += 1
                case .refused(let code, _) where code == JetStream.wrongLastMessageID:
                    // Another publisher's message came in between (or the server dropped a copy this one
                    // expected): the rest goes again, the first of it expecting nothing, and fewer go at once
                    // while that happens (each refusal costs what was in flight).
                    state.pipeline.abandon()
                    outbox.rewind()
                    state.window = max(1, state.window / 2)
                    state.windowAcknowledged = 0
                case .refused(let code, let description):
                    throw PublishError("publish", message: "refused: \(description)", code: code)
                case .unanswered:
                    break
                }
                if outbox.inFlight == 0 { break }
            }
        }
        state.windowAcknowledged += acknowledged
        if state.windowAcknowledged >= state.window {
            state.window = min(Self.window, state.window * 2)
            state.windowAcknowledged = 0
        }
        let done = outbox.completed()
        // Never backwards: the messages acknowledged may reach into a transaction after the last one done.
        if let done { state.mark = max(state.mark, Mark(token: done, index: nil)) }
        shared.withLock {
            $0.published += acknowledged
            if let done { $0.position = done }
        }
        if let done { post(done, &state) }
        outbox.compact()
    }
}
