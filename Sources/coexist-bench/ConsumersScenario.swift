import CoexistRuntime
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// *consumers*: the same events to N consumers through coexistd's socket and through NATS JetStream, one
/// after the other in one run. Each arm: a writer process commits Task inserts at `eventRate` per second
/// (100-row transactions) for `seconds`, and every consumer must receive every change.
/// - socket: coexistd without a publisher; N subscribers in a subscriber process (one connection each). CPU:
///   coexistd's event service (every thread but the bridge's).
/// - JetStream: coexistd publishing to a real `nats-server -js` on a loopback port (one message per change);
///   N push consumers of the stream (no acknowledgements) in a consumer process over
///   ``StreamConsumers/connections`` connections. CPU: nats-server, plus coexistd's threads but the bridge's
///   (the publisher, the client library's, the idle event service).
///
/// CPU per delivered event is that CPU time (kernel included, from the first commit to the last delivery)
/// over the changes delivered to all consumers together. Delivery: commit → a transaction's last change
/// received, by every socket subscriber, and by the first ``StreamConsumers/sampled`` JetStream consumers (a
/// smaller sample). The consumer processes share the two cores with coexistd and nats-server: their own
/// queueing is in the delivery times.
enum ConsumersScenario {
    struct Arm: Sendable {
        var name: String
        var delivered = 0
        var expected = 0
        /// CPU nanoseconds of what delivers (socket: the event service; JetStream: server plus publisher),
        /// and of its parts.
        var cpu: Int64 = 0
        var parts: [(String, Int64)] = []
        var delivery = Measure.Distribution([])
    }

    struct Result: Sendable {
        var consumers: Int
        var eventRate: Int
        var events: Int
        var socket: Arm
        var jetStream: Arm
    }

    static func run(modelPath: String, consumers: Int, eventRate: Int, seconds: Int) throws -> Result {
        let rows = min(FanOutScenario.rowsPerTransaction, eventRate)
        let transactionRate = max(1, eventRate / rows)
        let transactions = max(1, transactionRate * seconds)
        let events = transactions * rows
        let store = try BenchStore(modelPath: modelPath)
        defer { store.remove() }
        let (server, url) = try PublishScenario.startServer(in: store.directory)
        defer {
            server.killNow()
            _ = server.wait()
        }
        let program = ChildProcess.executableDirectory() + "/coexist-bench"
        let writer = ["writer", "legacy", store.path, "\(transactions)", "\(transactionRate)"]

        // JetStream.
        let config = store.directory + "/publish.conf"
        try Data("[publish]\nnats-url = \(url)\nstream = BENCH\n".utf8).write(to: URL(fileURLWithPath: config))
        var daemon = try store.startDaemon(config: config)
        var jetStream = Arm(name: "JetStream", expected: events * consumers)
        do {
            defer {
                daemon.terminate()
                _ = daemon.wait()
            }
            let received = store.directory + "/received-stream"
            let ready = store.directory + "/ready-stream"
            let commits = store.directory + "/commits-stream"
            let reader = try ChildProcess(
                path: program,
                arguments: [
                    "stream-consumers", url, "BENCH", "\(consumers)", "\(events)", received, ready,
                    "\(seconds + 60)",
                ]
            )
            defer { stop(reader) }
            try awaitFile(ready, reader, "the JetStream consumers")
            let before = (
                Measure.cpuTime(pid: server.pid), Measure.cpuTime(pid: daemon.pid, excluding: Measure.bridgeThreads)
            )
            let writing = try ChildProcess(path: program, arguments: writer + [commits, "\(rows)"])
            guard writing.wait() == 0 else { throw BenchError("the JetStream arm's writer failed") }
            guard reader.wait() == 0 else { throw BenchError("the JetStream consumer process failed") }
            let after = (
                Measure.cpuTime(pid: server.pid), Measure.cpuTime(pid: daemon.pid, excluding: Measure.bridgeThreads)
            )
            jetStream.parts = [("nats-server", after.0 - before.0), ("coexistd", after.1 - before.1)]
            jetStream.cpu = jetStream.parts.reduce(0) { $0 + $1.1 }
            (jetStream.delivered, jetStream.delivery) = try outcome(received: received, commits: commits)
        }

        // The socket.
        daemon = try store.startDaemon(options: ["--max-clients", "\(consumers + 16)"])
        var socket = Arm(name: "socket", expected: events * consumers)
        do {
            defer {
                daemon.terminate()
                _ = daemon.wait()
            }
            let received = store.directory + "/received-socket"
            let ready = store.directory + "/ready-socket"
            let commits = store.directory + "/commits-socket"
            let reader = try ChildProcess(
                path: program,
                arguments: [
                    "subscribers", store.socket, "\(consumers)", "\(events)", received, ready, "\(seconds + 60)",
                ]
            )
            defer { stop(reader) }
            try awaitFile(ready, reader, "the socket subscribers")
            let before = Measure.cpuTime(pid: daemon.pid, excluding: Measure.bridgeThreads)
            let writing = try ChildProcess(path: program, arguments: writer + [commits, "\(rows)"])
            guard writing.wait() == 0 else { throw BenchError("the socket arm's writer failed") }
            guard reader.wait() == 0 else { throw BenchError("the subscriber process failed") }
            socket.cpu = Measure.cpuTime(pid: daemon.pid, excluding: Measure.bridgeThreads) - before
            socket.parts = [("coexistd", socket.cpu)]
            (socket.delivered, socket.delivery) = try outcome(received: received, commits: commits)
        }
        return Result(
            consumers: consumers,
            eventRate: eventRate,
            events: events,
            socket: socket,
            jetStream: jetStream
        )
    }

    /// Waits up to 5 minutes for `path` to exist (the consumer process `reader` made it once every consumer
    /// is live); fails at once when `reader` ended first.
    private static func awaitFile(_ path: String, _ reader: ChildProcess, _ what: String) throws {
        let deadline = Measure.now() + 300_000_000_000
        while access(path, F_OK) != 0 {
            guard !reader.hasExited else { throw BenchError("\(what) ended before they were ready") }
            guard Measure.now() < deadline else { throw BenchError("\(what) were not ready within 5 minutes") }
            usleep(20_000)
        }
    }

    /// Stops a consumer process that is still running (an arm that failed).
    private static func stop(_ reader: ChildProcess) {
        guard !reader.hasExited else { return }
        reader.killNow()
        _ = reader.wait()
    }

    /// The changes a consumer process received in all, and commit → receipt of the timed ones.
    private static func outcome(received: String, commits: String) throws -> (Int, Measure.Distribution) {
        var committed: [Int64: Int64] = [:]
        for line in (Measure.readFile(commits) ?? "").split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count == 2, let token = Int64(fields[0]), let time = Int64(fields[1]) { committed[token] = time }
        }
        let lines = (Measure.readFile(received) ?? "").split(separator: "\n")
        guard let summary = lines.first?.split(separator: " "), summary.count >= 2, let total = Int(summary[1]) else {
            throw BenchError("a consumer process wrote no summary")
        }
        var latencies: [Int64] = []
        for line in lines.dropFirst() {
            let fields = line.split(separator: " ")
            if fields.count == 2, let token = Int64(fields[0]), let time = Int64(fields[1]),
                let commit = committed[token]
            {
                latencies.append(time - commit)
            }
        }
        return (total, Measure.Distribution(latencies))
    }
}
