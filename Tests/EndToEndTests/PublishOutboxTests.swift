import CoexistPublish
import Testing

@testable import CoexistDaemon

/// The publisher's outbox keeps its books across thousands of messages, as the publisher drives it: sent in
/// order, acknowledged in order, sent again from the first unacknowledged one after a refusal, compacted as
/// it goes; a transaction is done once, in token order, exactly when its last message (or, for one without
/// messages, the one before it) is acknowledged; the bytes in flight are those of the messages in flight.
@Suite struct PublishOutboxTests {
    /// SplitMix64: a failure replays from its seed.
    struct Random {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int((z ^ (z >> 31)) % UInt64(bound))
        }
    }

    @Test(arguments: [1, 2, 3, 4]) func booksHoldAcrossSendsAcknowledgementsRewindsAndCompaction(seed: UInt64) {
        var random = Random(state: seed)
        var outbox = PublishService.Outbox()
        // The model: every message queued, in order (its mark and size), and where each transaction ends.
        var marks: [PublishService.Mark] = []
        var sizes: [Int] = []
        var ends: [(count: Int, token: Int64)] = []
        var acknowledged = 0
        var sent = 0
        var lastDone: Int64 = 0
        var due = 0
        var token: Int64 = 0
        let transactions: Int64 = 3_000
        var steps = 0
        while token < transactions || !outbox.isEmpty {
            steps += 1
            if steps > 1_000_000 {
                Issue.record("the outbox never emptied")
                return
            }
            // Seeds 3 and 4 queue it all in bursts: a backlog the acknowledgements work through for long
            // (compacted before it is ever empty).
            let adding = seed > 2 ? 64 : random.next(3) == 0 ? 1 : 0
            for _ in 0..<adding where token < transactions {
                token += 1
                let count = random.next(4) == 0 ? 0 : random.next(6)
                let pending = (0..<count).map { index in
                    let size = 1 + random.next(100)
                    marks.append(PublishService.Mark(token: token, index: index))
                    sizes.append(size)
                    return PublishService.Pending(
                        mark: PublishService.Mark(token: token, index: index),
                        outgoing: JetStream.Outgoing(
                            subject: "s",
                            data: [UInt8](repeating: 0, count: size),
                            messageID: "\(token):\(index)",
                            headers: []
                        )
                    )
                }
                outbox.add(token, pending)
                ends.append((marks.count, token))
            }
            for _ in 0..<random.next(8) where outbox.unsent > 0 {
                #expect(outbox.nextToSend.mark == marks[sent])
                outbox.sent()
                sent += 1
            }
            if outbox.inFlight > 0, random.next(20) == 0 {
                // A refusal: what is in flight goes again.
                outbox.rewind()
                sent = acknowledged
            } else {
                for _ in 0..<random.next(8) where outbox.inFlight > 0 {
                    #expect(outbox.acknowledge() == marks[acknowledged])
                    acknowledged += 1
                }
            }
            if let done = outbox.completed() {
                #expect(done > lastDone, "a transaction done twice or out of order")
                let end = ends.first { $0.token == done }
                #expect(end.map { $0.count <= acknowledged } == true, "done before its last message")
                let next = ends.first { $0.token > done }
                #expect(next.map { $0.count > acknowledged } ?? true, "a later transaction is done too")
                lastDone = done
            }
            // Every transaction whose messages are all in is done by now (none is said late).
            while due < ends.count, ends[due].count <= acknowledged { due += 1 }
            #expect(lastDone == (due > 0 ? ends[due - 1].token : 0), "a transaction all in is not done")
            outbox.compact()
            #expect(outbox.acknowledged < 4_096, "a long run of acknowledged messages was not dropped")
            #expect(outbox.messages.count - outbox.acknowledged == marks.count - acknowledged)
            #expect(outbox.inFlight == sent - acknowledged)
            #expect(outbox.bytes == sizes[acknowledged..<sent].reduce(0, +))
            #expect(outbox.unsent == marks.count - sent)
        }
        #expect(lastDone == transactions)
        #expect(acknowledged == marks.count)
    }
}
