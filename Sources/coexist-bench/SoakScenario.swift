import CoexistRuntime

#if canImport(Glibc)
import Glibc
#endif

/// *soak*: coexistd under a long mixed load. A writer on each side commits one-row transactions at `rate`
/// per second each; `subscribers` peers of every kind (``SoakClient/Kind``: fast, slow, never-reading,
/// reconnecting, hostile) hammer the socket; coexistd gets a SIGHUP every 10 s. Every 5 s the daemon's RSS is
/// sampled. At the end, once the daemon has published the last commit and the clients have drained, every
/// honest subscriber must have received every transaction after its start exactly once, in order, and the
/// RSS after the warm-up (the first quarter, at least 30 s unless the run is shorter) must stay flat.
enum SoakScenario {
    struct Result: Sendable {
        var seconds: Int
        var subscribers: Int
        var honest: Int
        var complete: Int
        var missing: Int
        var disordered: Int
        var lags: Int
        var hostileConnections: Int
        var reloads: Int
        var transactions: Int
        /// kB: after the warm-up, at the end, the highest after the warm-up.
        var rssWarm: Int64
        var rssEnd: Int64
        var rssMax: Int64
        /// kB at the start of each minute (each 10 s for runs under 5 minutes), to see a trend.
        var rssTrend: [Int64] = []
        var cpuPercent: Double
        /// Honest subscribers that missed transactions, by kind, and how many transactions they missed.
        var incomplete: [String: Int] = [:]
        var missingByKind: [String: Int] = [:]

        /// Flat: the highest RSS after the warm-up is within 10 % + 4 MB of the RSS when it ended.
        var flat: Bool { rssMax <= rssWarm + rssWarm / 10 + 4_096 }
        var passed: Bool { complete == honest && disordered == 0 && flat }
    }

    static func run(modelPath: String, seconds: Int, subscribers: Int, rate: Int) throws -> Result {
        try BenchStore.withDaemon(modelPath: modelPath) { store, daemon in
            try soak(store, daemon, seconds: seconds, subscribers: subscribers, rate: rate)
        }
    }

    /// The mix of kinds for `total` peers: half fast, a fifth slow, a tenth of each other kind.
    static func mix(_ total: Int) -> [SoakClient.Kind] {
        let slow = max(1, total / 5)
        let tenth = max(1, total / 10)
        let fast = max(1, total - slow - 3 * tenth)
        return Array(repeating: .fast, count: fast) + Array(repeating: .slow, count: slow)
            + Array(repeating: .neverReading, count: tenth) + Array(repeating: .reconnecting, count: tenth)
            + Array(repeating: .hostile, count: tenth)
    }

    private static func soak(
        _ store: BenchStore,
        _ daemon: ChildProcess,
        seconds: Int,
        subscribers: Int,
        rate: Int
    ) throws -> Result {
        let clients = mix(subscribers).enumerated().map { SoakClient(kind: $1, number: $0, socket: store.socket) }
        let started = Measure.now()
        for client in clients { client.connect(now: started) }
        let outputs = ["legacy", "new"].map { store.directory + "/soak-\($0)" }
        let writers = try ["legacy", "new"].enumerated().map { index, side in
            try ChildProcess(
                path: ChildProcess.executableDirectory() + "/coexist-bench",
                arguments: ["writer", side, store.path, "\(rate * seconds)", "\(rate)", outputs[index]]
            )
        }
        let startCPU = Measure.cpuTime(pid: daemon.pid)
        var samples: [(time: Int64, rss: Int64)] = []
        var reloads = 0
        var nextSample = started
        var nextReload = started + 10_000_000_000
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        let end = started + Int64(seconds) * 1_000_000_000
        // The run, then the drain: writers done, the daemon caught up, every honest client at the last token.
        var lastToken: Int64?
        var drainDeadline = Int64.max
        while true {
            let now = Measure.now()
            if now >= nextSample {
                samples.append((now, rss(daemon.pid)))
                nextSample = now + 5_000_000_000
            }
            if now < end && now >= nextReload {
                kill(daemon.pid, SIGHUP)
                reloads += 1
                nextReload = now + 10_000_000_000
            }
            if now >= end && lastToken == nil && writers.allSatisfy({ $0.hasExited }) {
                lastToken = try writerTokens(outputs).last ?? 0
                drainDeadline = now + 60_000_000_000
                for client in clients { client.draining = true }
            }
            if let lastToken {
                let caughtUp = clients.filter(\.isHonest).allSatisfy { $0.last >= lastToken }
                if caughtUp || now >= drainDeadline { break }
            }
            pollOnce(clients, now: now, buffer: &buffer)
        }
        let elapsed = Measure.now() - started
        let cpu = Double(Measure.cpuTime(pid: daemon.pid) - startCPU) / Double(elapsed) * 100
        let tokens = try writerTokens(outputs)
        for writer in writers { _ = writer.wait() }
        var result = Result(
            seconds: seconds,
            subscribers: clients.count,
            honest: clients.filter(\.isHonest).count,
            complete: 0,
            missing: 0,
            disordered: clients.reduce(0) { $0 + $1.disordered },
            lags: clients.reduce(0) { $0 + $1.lags },
            hostileConnections: clients.filter { $0.kind == .hostile }.reduce(0) { $0 + $1.connections },
            reloads: reloads,
            transactions: tokens.count,
            rssWarm: 0,
            rssEnd: samples.last?.rss ?? 0,
            rssMax: 0,
            cpuPercent: cpu
        )
        for client in clients where client.isHonest {
            let start = client.start ?? Int64.max
            let expected = tokens.count - firstIndex(after: start, in: tokens)
            if client.received == expected {
                result.complete += 1
            } else {
                result.missing += max(0, expected - client.received)
                result.incomplete[client.kind.rawValue, default: 0] += 1
                result.missingByKind[client.kind.rawValue, default: 0] += max(0, expected - client.received)
            }
        }
        let warmUp = started + min(max(Int64(seconds) / 4, 30), Int64(seconds) / 2) * 1_000_000_000
        let afterWarmUp = samples.filter { $0.time >= warmUp }
        result.rssWarm = afterWarmUp.first?.rss ?? result.rssEnd
        result.rssMax = afterWarmUp.map(\.rss).max() ?? result.rssEnd
        let step: Int64 = seconds < 300 ? 10_000_000_000 : 60_000_000_000
        var mark = started
        for sample in samples where sample.time >= mark {
            result.rssTrend.append(sample.rss)
            mark += step * ((sample.time - mark) / step + 1)
        }
        return result
    }

    private static func pollOnce(_ clients: [SoakClient], now: Int64, buffer: inout [UInt8]) {
        for client in clients { client.tick(now: now) }
        let reading = clients.filter { $0.wantsRead(now: now) }
        var descriptors = reading.map { pollfd(fd: $0.descriptor, events: Int16(POLLIN), revents: 0) }
        guard poll(&descriptors, nfds_t(descriptors.count), 20) > 0 else { return }
        for (index, descriptor) in descriptors.enumerated() where descriptor.revents != 0 {
            reading[index].read(now: now, buffer: &buffer)
        }
    }

    /// Every token the writers committed, sorted (each writes "token commit-time" lines when done).
    private static func writerTokens(_ outputs: [String]) throws -> [Int64] {
        var tokens: [Int64] = []
        for output in outputs {
            guard let text = Measure.readFile(output) else { throw BenchError("a writer left no \(output)") }
            for line in text.split(separator: "\n") {
                if let token = Int64(line.split(separator: " ").first ?? "") { tokens.append(token) }
            }
        }
        return tokens.sorted()
    }

    private static func firstIndex(after token: Int64, in sorted: [Int64]) -> Int {
        var low = 0
        var high = sorted.count
        while low < high {
            let middle = (low + high) / 2
            if sorted[middle] <= token { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Resident set size (kB) of `pid` (`VmRSS`).
    private static func rss(_ pid: Int32) -> Int64 {
        guard let text = Measure.readFile("/proc/\(pid)/status") else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int64(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
        }
        return 0
    }
}
