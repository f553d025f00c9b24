import CoexistProtocol
import CoexistRuntime

#if canImport(Glibc)
import Glibc
#endif

/// *fan-out*: N subscribers on one coexistd — one of them stalled (it subscribes and never reads) and N − 1
/// live ones in a subscriber process — while a writer process commits Task inserts at a fixed event rate
/// (100-row transactions). Delivery: commit → the transaction's last event read by a live subscriber.
/// Every live subscriber must receive every event in order; the stalled one must be told it lagged (or, when
/// the run fits in its queue, receive everything once it reads).
enum FanOutScenario {
    struct Result: Sendable {
        var subscribers: Int
        var eventRate: Int
        /// Events each live subscriber should receive.
        var events: Int
        var delivery: Measure.Distribution
        /// Events live subscribers did not receive (in time, or at all after a lag).
        var missing: Int
        var disordered: Int
        /// Live subscribers the daemon disconnected as lagged.
        var laggedLive: Int
        var stalled: Stalled
        /// The daemon's CPU time (ns, kernel included) from the first commit to the last delivery, all threads
        /// and its event service alone (every thread but the bridge's), and the events delivered meanwhile.
        var daemonCPU: Int64 = 0
        var eventServiceCPU: Int64 = 0
        var delivered: Int = 0

        /// What the stalled subscriber got once it read.
        enum Stalled: String, Sendable {
            /// Told it lagged (its queue overflowed), then disconnected.
            case lagged
            /// Every event: the run fitted in its queue and socket buffer.
            case complete
            /// Neither: events lost silently.
            case incomplete
        }
    }

    static let rowsPerTransaction = 100

    static func run(
        modelPath: String,
        levels: [Int],
        eventRate: Int,
        seconds: Int,
        queueLimit: Int?
    ) throws
        -> [Result]
    {
        try levels.map { level in
            try measure(modelPath: modelPath, subscribers: level, eventRate: eventRate, seconds: seconds, queueLimit)
        }
    }

    private static func measure(
        modelPath: String,
        subscribers: Int,
        eventRate: Int,
        seconds: Int,
        _ queueLimit: Int?
    )
        throws -> Result
    {
        let store = try BenchStore(modelPath: modelPath)
        defer { store.remove() }
        var options = ["--max-clients", "\(subscribers + 16)"]
        if let queueLimit { options += ["--queue-limit", "\(queueLimit)"] }
        let daemon = try store.startDaemon(options: options)
        defer {
            daemon.terminate()
            daemon.wait()
        }
        let stalled = try LineClient(path: store.socket)
        try stalled.send(EventRequest("subscribe", since: .now, entities: ["Task"]).text)
        while let line = try stalled.readLine(), !line.contains("end_of_backlog") {}

        let rows = min(rowsPerTransaction, eventRate)
        let transactionRate = max(1, eventRate / rows)
        let transactions = max(1, transactionRate * seconds)
        let expected = transactions * rows
        let ready = store.directory + "/ready"
        let received = store.directory + "/received"
        let commits = store.directory + "/commits"
        let program = ChildProcess.executableDirectory() + "/coexist-bench"
        let reader = try ChildProcess(
            path: program,
            arguments: [
                "subscribers", store.socket, "\(subscribers - 1)", "\(expected)", received, ready, "\(seconds + 10)",
            ]
        )
        defer { for name in ["ready", "received", "commits"] { unlink(store.directory + "/" + name) } }
        let readyBy = Measure.now() + 120_000_000_000
        while access(ready, F_OK) != 0 {
            guard Measure.now() < readyBy else { throw BenchError("the subscribers did not connect within 120 s") }
            usleep(20_000)
        }
        let cpuBefore = (
            Measure.cpuTime(pid: daemon.pid), Measure.cpuTime(pid: daemon.pid, excluding: Measure.bridgeThreads)
        )
        let writer = try ChildProcess(
            path: program,
            arguments: ["writer", "legacy", store.path, "\(transactions)", "\(transactionRate)", commits, "\(rows)"]
        )
        guard writer.wait() == 0 else { throw BenchError("the fan-out writer failed") }
        guard reader.wait() == 0 else { throw BenchError("the subscriber process failed") }
        let cpuAfter = (
            Measure.cpuTime(pid: daemon.pid), Measure.cpuTime(pid: daemon.pid, excluding: Measure.bridgeThreads)
        )
        // The stalled subscriber now reads what it was sent: a "lagged" message, or (when everything fitted in
        // its queue and socket buffer) every event. Anything else would be a silent loss.
        try stalled.setReadTimeout(seconds: 2)
        var stalledState = Result.Stalled.incomplete
        var stalledEvents = 0
        while let line = try readLine(stalled) {
            if line.hasPrefix(#"{"type":"lagged""#) {
                stalledState = .lagged
                break
            }
            if line.hasPrefix(#"{"type":"event""#) { stalledEvents += 1 }
            if stalledEvents == expected {
                stalledState = .complete
                break
            }
        }
        var measured = try result(
            subscribers: subscribers,
            eventRate: eventRate,
            expected: expected,
            commits: commits,
            received: received,
            stalled: stalledState
        )
        measured.daemonCPU = cpuAfter.0 - cpuBefore.0
        measured.eventServiceCPU = cpuAfter.1 - cpuBefore.1
        measured.delivered = expected * (subscribers - 1) - measured.missing
        return measured
    }

    /// The next line; nil at the end of the stream or when none came within the read timeout.
    private static func readLine(_ client: LineClient) throws -> String? {
        do {
            return try client.readLine()
        } catch {
            if error.code == EAGAIN || error.code == EWOULDBLOCK { return nil }
            throw error
        }
    }

    private static func result(
        subscribers: Int,
        eventRate: Int,
        expected: Int,
        commits: String,
        received: String,
        stalled: Result.Stalled
    ) throws -> Result {
        var committed: [Int64: Int64] = [:]
        for line in (Measure.readFile(commits) ?? "").split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count == 2, let token = Int64(fields[0]), let time = Int64(fields[1]) { committed[token] = time }
        }
        let lines = (Measure.readFile(received) ?? "").split(separator: "\n")
        // "received R disordered D lagged L closed C"
        guard let summary = lines.first?.split(separator: " "), summary.count == 8,
            let total = Int(summary[1]), let disordered = Int(summary[3]), let lagged = Int(summary[5])
        else { throw BenchError("the subscriber process wrote no summary") }
        var latencies: [Int64] = []
        latencies.reserveCapacity(lines.count)
        for line in lines.dropFirst() {
            let fields = line.split(separator: " ")
            if fields.count == 2, let token = Int64(fields[0]), let time = Int64(fields[1]),
                let commit = committed[token]
            {
                latencies.append(time - commit)
            }
        }
        return Result(
            subscribers: subscribers,
            eventRate: eventRate,
            events: expected,
            delivery: Measure.Distribution(latencies),
            missing: expected * (subscribers - 1) - total,
            disordered: disordered,
            laggedLive: lagged,
            stalled: stalled
        )
    }
}
