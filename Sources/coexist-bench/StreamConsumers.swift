import CoexistPublish
import CoexistRuntime
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The JetStream consumer process of the consumers scenario:
/// `coexist-bench stream-consumers URL STREAM COUNT EXPECTED-CHANGES OUT READY-FILE SECONDS`.
///
/// Makes COUNT push consumers of STREAM (every change stored from now on, no acknowledgements), each
/// delivering to a subject of its own (nats-server 2.9 binds a push consumer to a literal subscription
/// only), spread over ``connections`` client connections whose messages the client library hands out on one
/// shared thread; creates READY-FILE once every consumer exists; then waits until each consumer has
/// EXPECTED-CHANGES messages or SECONDS pass. OUT gets "received R", then "token receive-time-ns" for the
/// last change of every transaction as each of the first ``sampled`` consumers received it (their messages'
/// token header is read; the others' messages are counted only).
enum StreamConsumers {
    /// Client connections the consumers are spread over.
    static let connections = 10
    /// Consumers whose deliveries are timed.
    static let sampled = 10

    /// What the consumers received: touched on the delivery thread, read at the end.
    private final class Received: Sendable {
        let total = Atomic<Int>(0)
        /// By timed consumer and token: when the transaction's last message arrived.
        let arrivals = PthreadLocked<[Int: [Int64: Int64]]>([:])
    }

    static func run(
        url: String,
        stream: String,
        count: Int,
        expected: Int,
        output: String,
        ready: String,
        seconds: Int
    ) throws {
        let clients = try (0..<min(connections, count)).map {
            try JetStream(servers: [url], name: "coexist-bench consumers \($0)", sharedDelivery: true)
        }
        let received = Received()
        var subscriptions: [CallbackSubscription] = []
        subscriptions.reserveCapacity(count)
        for consumer in 0..<count {
            let client = clients[consumer % clients.count]
            let subject = "bench.deliver.\(consumer)"
            let timed = consumer < sampled
            subscriptions.append(
                try client.subscribe(subject, headers: timed ? ["Coexist-Token"] : [], payload: false) { message in
                    received.total.add(1, ordering: .relaxed)
                    guard timed, let token = Int64(message.headers["Coexist-Token"] ?? "") else { return }
                    let now = Measure.now()
                    received.arrivals.withLock { $0[consumer, default: [:]][token] = now }
                }
            )
            try client.addPushConsumer(stream: stream, subject: "coexist.>", deliver: subject)
        }
        guard let marker = fopen(ready, "w") else { throw BenchError("cannot create \(ready)") }
        fclose(marker)

        let deadline = Measure.now() + Int64(seconds) * 1_000_000_000
        while received.total.load(ordering: .relaxed) < count * expected, Measure.now() < deadline {
            usleep(20_000)
        }
        subscriptions.removeAll()
        var text = "received \(received.total.load(ordering: .relaxed))\n"
        for arrivals in received.arrivals.withLock({ $0 }).values {
            for (token, time) in arrivals { text += "\(token) \(time)\n" }
        }
        guard let file = fopen(output, "w") else { throw BenchError("cannot write \(output)") }
        defer { fclose(file) }
        fputs(text, file)
    }
}
