import CoexistPublish
import CoexistRuntime
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// *publish*: coexistd publishing to a real `nats-server -js` (Debian's, started here on a loopback port with
/// its store in the bench's temporary folder). A plain NATS subscriber in this process on the stream's
/// subjects takes the time each message arrives: the server routes a message to subscribers as it takes it
/// in, before it is stored and acknowledged, so this is commit → message at the server; copies are told
/// apart by their `Nats-Msg-Id` (a copy sent again counts once), and the stream must hold every change at
/// the end.
/// - latency: a writer process commits `count` one-row transactions at `rate` per second on the legacy side:
///   commit → message at the server; and commit → message delivered to a pull consumer, which the server
///   does once it has stored the message, when it acknowledges it to the publisher (an upper bound of commit
///   → acknowledgement, the consumer's delivery included).
/// - sustained: with coexistd stopped, a writer commits `changes` inserts in 100-row transactions; coexistd
///   starts again and publishes that backlog while it mirrors it: changes published per second (first
///   message received → last), side by side with this process publishing as many messages (20,000 at most)
///   of the same size through the same client, each acknowledged before the next (unpipelined publishing).
/// - pull: a writer commits `pullRate` changes per second in 10-row transactions for 3 s while this process
///   reads the stream as a durable pull consumer (a request for 256 messages kept waiting on the server,
///   each message taken as it comes): commit → change delivered to the consumer, every change; and, side by
///   side, commit → message at the server (a plain subscriber): the part of the delivery time that is the
///   publisher's.
enum PublishScenario {
    struct Result: Sendable {
        var latency: Measure.Distribution
        var missing: Int
        /// Commit → delivered to a pull consumer (stored), and how many were not.
        var stored: Measure.Distribution
        var storedMissing: Int
        var changes: Int
        /// Changes per second published by coexistd, and messages per second published directly.
        var sustained: Double
        var direct: Double
        /// Commit → delivery to the pull consumer, per change; changes committed and not delivered.
        var pull: Measure.Distribution
        var pullMissing: Int
        /// The same changes' commit → message at the server (a plain subscriber): how much of the delivery
        /// time is the publisher's.
        var pullAtServer: Measure.Distribution
        var pullRate: Int
    }

    /// The pull phase's figures.
    struct PullDelivery {
        /// Commit → delivery to the pull consumer, per change; changes committed and not delivered.
        var delivered: Measure.Distribution
        var missing: Int
        /// Commit → message at the server, per change.
        var atServer: Measure.Distribution
    }

    static func run(modelPath: String, count: Int, rate: Int, changes: Int, pullRate: Int) throws -> Result {
        let store = try BenchStore(modelPath: modelPath)
        defer { store.remove() }
        let (server, url) = try startServer(in: store.directory)
        defer {
            server.killNow()
            _ = server.wait()
        }
        let config = store.directory + "/publish.conf"
        try Data("[publish]\nnats-url = \(url)\nstream = BENCH\n".utf8).write(to: URL(fileURLWithPath: config))
        var daemon = try store.startDaemon(config: config)
        defer {
            daemon.terminate()
            _ = daemon.wait()
        }
        let client = try JetStream(servers: [url], name: "coexist-bench")
        // Dropped before the pull phase: unread, it would take a copy of every message there.
        var subscription: Subscription? = try client.subscribe("coexist.>")

        // Latency: one-row transactions at the rate, taken as they reach the server and, on a thread of its
        // own, as a pull consumer gets them (once stored: when the server acknowledges them).
        let storedArrivals = StoredArrivals(
            try client.pullSubscribe(stream: "BENCH", subject: "coexist.>", durable: "stored")
        )
        let storedReader = try WorkerThread(name: "bench-stored") { storedArrivals.read(count) }
        let output = store.directory + "/commits-publish"
        let writer = try ChildProcess(
            path: ChildProcess.executableDirectory() + "/coexist-bench",
            arguments: ["writer", "legacy", store.path, "\(count)", "\(rate)", output]
        )
        var received: [Int64: Int64] = [:]
        var sample: [UInt8] = []
        let deadline = Measure.now() + Int64(count / max(rate, 1) + 60) * 1_000_000_000
        while received.count < count, Measure.now() < deadline {
            guard let message = try subscription?.next(timeout: 1_000, headers: ["Coexist-Token"]) else { continue }
            let now = Measure.now()
            if let token = Int64(message.headers["Coexist-Token"] ?? "") { received[token] = now }
            sample = message.data
        }
        guard writer.wait() == 0 else { throw BenchError("the writer failed") }
        storedReader.join()
        if let failure = storedArrivals.failure { throw BenchError("the stored-message reader failed: \(failure)") }
        var latencies: [Int64] = []
        var storedLatencies: [Int64] = []
        var committed = 0
        for line in (Measure.readFile(output) ?? "").split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 2, let token = Int64(fields[0]), let time = Int64(fields[1]) else { continue }
            committed += 1
            if let arrival = received[token] { latencies.append(arrival - time) }
            if let arrival = storedArrivals.arrivals[token] { storedLatencies.append(arrival - time) }
        }
        storedArrivals.release()

        // Sustained: a backlog of 100-row transactions, written while coexistd is stopped, published while it
        // is mirrored.
        daemon.terminate()
        _ = daemon.wait()
        let transactions = max(1, changes / 100)
        let burst = store.directory + "/commits-burst"
        let burstWriter = try ChildProcess(
            path: ChildProcess.executableDirectory() + "/coexist-bench",
            arguments: ["writer", "legacy", store.path, "\(transactions)", "1000000", burst, "100"]
        )
        guard burstWriter.wait() == 0 else { throw BenchError("the burst writer failed") }
        daemon = try store.startDaemon(config: config)
        var ids: Set<String> = []
        var first: Int64?
        var last: Int64 = 0
        let burstDeadline = Measure.now() + Int64(changes / 1_000 + 120) * 1_000_000_000
        while ids.count < transactions * 100, Measure.now() < burstDeadline {
            guard let message = try subscription?.next(timeout: 1_000, headers: ["Nats-Msg-Id"]) else { continue }
            guard ids.insert(message.headers["Nats-Msg-Id"] ?? "").inserted else { continue }
            last = Measure.now()
            if first == nil { first = last }
        }
        let arrived = ids.count
        // Every change of the run is in the stream once (the latency run's and this one's).
        let expected = UInt64(committed + transactions * 100)
        var stored = try client.state(of: "BENCH").messages
        let storeDeadline = Measure.now() + 30_000_000_000
        while stored < expected, Measure.now() < storeDeadline {
            usleep(50_000)
            stored = try client.state(of: "BENCH").messages
        }
        guard stored == expected else {
            throw BenchError("the stream holds \(stored) messages, not \(committed + transactions * 100)")
        }
        guard arrived == transactions * 100 else {
            throw BenchError("\(arrived) of \(transactions * 100) changes were published")
        }
        let sustained = Double(arrived - 1) / (Double(last - (first ?? last)) / 1e9)

        // The same client publishing messages of the same size itself, each acknowledged.
        try client.ensureStream("DIRECT", subject: "direct.>")
        // At most 20,000 (3 s at the client's rate): a rate, not a total.
        let directCount = min(arrived, 20_000)
        let directStart = Measure.now()
        for index in 0..<directCount {
            _ = try client.publish(subject: "direct.Task.insert", data: sample, messageID: "direct:\(index)")
        }
        let direct = Double(directCount) / (Double(Measure.now() - directStart) / 1e9)
        subscription = nil
        let pull = try pullDelivery(client, store: store, rate: pullRate)
        return Result(
            latency: Measure.Distribution(latencies),
            missing: committed - latencies.count,
            stored: Measure.Distribution(storedLatencies),
            storedMissing: committed - storedLatencies.count,
            changes: arrived,
            sustained: sustained,
            direct: direct,
            pull: pull.delivered,
            pullMissing: pull.missing,
            pullAtServer: pull.atServer,
            pullRate: pullRate
        )
    }

    /// A writer commits `rate` changes per second (10-row transactions) for 3 s while a durable pull consumer
    /// reads them: commit → delivery of each change, and how many were committed and not delivered; and, from
    /// a plain subscriber on a thread of its own, commit → message at the server of each.
    private static func pullDelivery(
        _ client: JetStream,
        store: BenchStore,
        rate: Int
    ) throws -> PullDelivery {
        let consumer = try client.pullSubscribe(stream: "BENCH", subject: "coexist.>", durable: "bench-pull")
        // Subscribed before the writer starts, as the consumer is: no change goes by unseen.
        let routed = RoutedArrivals(try client.subscribe("coexist.>"))
        let transactions = max(1, rate / 10) * 3
        let output = store.directory + "/commits-pull"
        let writer = try ChildProcess(
            path: ChildProcess.executableDirectory() + "/coexist-bench",
            arguments: ["writer", "legacy", store.path, "\(transactions)", "\(max(1, rate / 10))", output, "10"]
        )
        let routedReader = try WorkerThread(name: "bench-routed") { routed.read(transactions * 10) }
        var arrivals: [(token: Int64, at: Int64)] = []
        arrivals.reserveCapacity(transactions * 10)
        let deadline = Measure.now() + 120_000_000_000
        while arrivals.count < transactions * 10, Measure.now() < deadline {
            guard let message = try consumer.next(timeout: 100, headers: ["Coexist-Token"]) else { continue }
            if let token = Int64(message.headers["Coexist-Token"] ?? "") { arrivals.append((token, Measure.now())) }
        }
        guard writer.wait() == 0 else { throw BenchError("the pull phase's writer failed") }
        var committedAt: [Int64: Int64] = [:]
        for line in (Measure.readFile(output) ?? "").split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 2, let token = Int64(fields[0]), let time = Int64(fields[1]) else { continue }
            committedAt[token] = time
        }
        let latencies = arrivals.compactMap { arrival in committedAt[arrival.token].map { arrival.at - $0 } }
        routedReader.join()
        if let failure = routed.failure { throw BenchError("the plain subscriber failed: \(failure)") }
        let routedLatencies = routed.arrivals.compactMap { arrival in committedAt[arrival.token].map { arrival.at - $0 }
        }
        return PullDelivery(
            delivered: Measure.Distribution(latencies),
            missing: committedAt.count * 10 - latencies.count,
            atServer: Measure.Distribution(routedLatencies)
        )
    }

    /// Starts `nats-server -js` on a free loopback port with its store in `directory`: the process and its URL.
    static func startServer(in directory: String) throws -> (ChildProcess, String) {
        let log = directory + "/nats.log"
        let server = try ChildProcess(
            path: "/usr/sbin/nats-server",
            arguments: ["-js", "-a", "127.0.0.1", "-p", "-1", "-sd", directory + "/nats", "-l", log]
        )
        let deadline = Measure.now() + 20_000_000_000
        while Measure.now() < deadline {
            let text = Measure.readFile(log) ?? ""
            if let range = text.range(of: "Listening for client connections on ") {
                let address = text[range.upperBound...].prefix { $0 != "\n" && $0 != "\r" }
                return (server, "nats://" + address)
            }
            usleep(20_000)
        }
        server.killNow()
        _ = server.wait()
        throw BenchError("nats-server did not start (is it installed? .ci/install-deps installs it)")
    }
}

/// A plain subscriber of the pull phase, read on a thread of its own: when each change first reached the
/// server (a copy the publisher sent again is told apart by its `Nats-Msg-Id` and counted once). Its owner
/// reads `arrivals` and `failure` only after joining that thread.
private final class RoutedArrivals: @unchecked Sendable {
    private var subscription: Subscription?
    private(set) var arrivals: [(token: Int64, at: Int64)] = []
    private var seen: Set<String> = []
    /// Why reading stopped early, if it did.
    private(set) var failure: PublishError?

    init(_ subscription: Subscription) { self.subscription = subscription }

    /// Reads until `count` changes arrived, nothing came for 10 s, or reading failed; then unsubscribes.
    func read(_ count: Int) {
        defer { subscription = nil }
        failure = readMessages(until: { arrivals.count >= count }) { timeout throws(PublishError) in
            try subscription?.next(timeout: timeout, headers: ["Coexist-Token", "Nats-Msg-Id"])
        } take: { message in
            guard seen.insert(message.headers["Nats-Msg-Id"] ?? "").inserted,
                let token = Int64(message.headers["Coexist-Token"] ?? "")
            else { return }
            arrivals.append((token, Measure.now()))
        }
    }
}

/// Hands each message `next` gives (waiting 100 ms for one) to `take` until `done()`, nothing came for 10 s,
/// or reading failed: why it failed, if it did.
private func readMessages(
    until done: () -> Bool,
    next: (Int64) throws(PublishError) -> JetStream.Message?,
    take: (JetStream.Message) -> Void
) -> PublishError? {
    var quiet = 0
    while !done(), quiet < 100 {
        let message: JetStream.Message?
        do {
            message = try next(100)
        } catch {
            return error
        }
        guard let message else {
            quiet += 1
            continue
        }
        quiet = 0
        take(message)
    }
    return nil
}

/// The pull consumer of the latency phase, read on a thread of its own: when each token arrived. Its owner
/// reads `arrivals` only after joining that thread.
private final class StoredArrivals: @unchecked Sendable {
    private var consumer: PullSubscription?
    private(set) var arrivals: [Int64: Int64] = [:]

    init(_ consumer: PullSubscription) { self.consumer = consumer }

    /// Why reading stopped early, if it did.
    private(set) var failure: PublishError?

    /// Reads until `count` tokens arrived, nothing came for 10 s, or reading failed.
    func read(_ count: Int) {
        failure = readMessages(until: { arrivals.count >= count }) { timeout throws(PublishError) in
            try consumer?.next(timeout: timeout, headers: ["Coexist-Token"])
        } take: { message in
            if let token = Int64(message.headers["Coexist-Token"] ?? ""), arrivals[token] == nil {
                arrivals[token] = Measure.now()
            }
        }
    }

    /// Deletes the consumer (it would take a copy of every later message).
    func release() { consumer = nil }
}
