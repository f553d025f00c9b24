import Foundation
import TestSupport
import Testing

/// The benchmark's scenarios run end to end on a small scale, so that the figures the README quotes come
/// from a tool that works: every committed transaction reaches the subscriber and the other side.
@Suite struct BenchSmokeTests {
    private struct Summary: Decodable {
        struct Distribution: Decodable {
            var n: Int
            var p50: Int
        }
        struct Latency: Decodable {
            var event: Distribution
            var mirror: Distribution
            var missing: Int
        }
        struct Overhead: Decodable { var ratio: Double }
        struct Idle: Decodable { var seconds: Int }
        struct Throughput: Decodable {
            var changes: Int
            var perSecond: Int
        }
        struct CatchUp: Decodable {
            var changes: Int
            var peakRSSKilobytes: Int
        }
        struct FanOut: Decodable {
            var events: Int
            var delivery: Distribution
            var missing: Int
            var disordered: Int
            var lagged: Int
            var stalled: String
        }
        struct AdapterLatency: Decodable {
            var shown: Distribution
            var missing: Int
        }
        struct AdapterFetch: Decodable {
            var rows: Int
            var ratio: Double
        }
        struct AdapterEnumerate: Decodable {
            var rows: Int
            var peakRSSKilobytes: Int
        }
        struct Snapshot: Decodable {
            var rows: Int
            var rowsPerSecond: Int
            var rawRowsPerSecond: Int
        }
        struct ConsumerArm: Decodable {
            var delivered: Int
            var expected: Int
            var delivery: Distribution
            var cpuNanoseconds: Int
        }
        struct Consumers: Decodable {
            var consumers: Int
            var events: Int
            var socket: ConsumerArm
            var jetStream: ConsumerArm
        }
        struct Publish: Decodable {
            var latency: Distribution
            var missing: Int
            var stored: Distribution
            var storedMissing: Int
            var sustained: Int
            var pull: Distribution
            var pullMissing: Int
        }
        var publish: Publish?
        var consumers: Consumers?
        var snapshot: Snapshot?
        var adapterEnumerate: [AdapterEnumerate]?
        var adapterLatency: [AdapterLatency]?
        var adapterFetch: [String: AdapterFetch]?
        var fanOut: [String: FanOut]?
        var throughput: [String: Throughput]?
        var catchUp: CatchUp?
        var latency: [String: Latency]?
        var writeOverhead: [String: Overhead]?
        var idle: Idle?
        var historyList: [HistoryList]?
        var migrate: Migrate?
        struct Migrate: Decodable {
            var rows: Int
            var seconds: Double
            var peakRSSKilobytes: Int
        }
        struct HistoryList: Decodable {
            var transactions: Int
            var peakRSSKilobytes: Int
        }
    }

    private func summary(_ arguments: [String]) throws -> Summary {
        let result = try ProductProcess.run("coexist-bench", arguments + ["--model", Fixtures.demoModel])
        #expect(result.status == 0, "\(result.stderr)")
        let last = try #require(result.stdout.split(separator: "\n").last)
        return try JSONDecoder().decode(Summary.self, from: Data(last.utf8))
    }

    @Test func latencyLosesNothing() throws {
        let summary = try summary(["latency", "--count", "60", "--rate", "300"])
        for side in ["legacy", "new"] {
            let latency = try #require(summary.latency?[side])
            #expect(latency.missing == 0)
            #expect(latency.event.n == 60 && latency.mirror.n == 60)
            #expect(latency.event.p50 > 0 && latency.mirror.p50 >= latency.event.p50)
        }
    }

    /// The adapter scenarios, small: every update reaches the held object in all four cases, and each
    /// fetch returns every row (the scenario checks the counts).
    @Test func adapterScenariosReport() throws {
        let latency = try #require(try summary(["adapter-latency", "--count", "50", "--rate", "200"]).adapterLatency)
        #expect(latency.count == 4)
        #expect(latency.allSatisfy { $0.missing == 0 && $0.shown.n == 50 && $0.shown.p50 > 0 })
        let fetch = try #require(try summary(["adapter-fetch", "--fetch-rows", "200"]).adapterFetch)
        #expect(fetch["legacy"]?.rows == 200 && fetch["new"]?.rows == 200)
        #expect((fetch["legacy"]?.ratio ?? 0) > 0 && (fetch["new"]?.ratio ?? 0) > 0)
        let enumerate = try #require(try summary(["adapter-enumerate", "--enumerate-rows", "3000"]).adapterEnumerate)
        #expect(enumerate.map(\.rows) == [300, 3_000])
        #expect(enumerate.allSatisfy { $0.peakRSSKilobytes > 0 })
    }

    /// The snapshot scenario, small: the subscriber gets every row (the scenario checks the count).
    @Test func snapshotScenarioReports() throws {
        let snapshot = try #require(try summary(["snapshot", "--snapshot-rows", "2000"]).snapshot)
        #expect(snapshot.rows == 2_000)
        #expect(snapshot.rowsPerSecond > 0 && snapshot.rawRowsPerSecond > 0)
    }

    /// Fan-out, small: every live subscriber gets every event in order; the stalled one is told it lagged
    /// (a small queue limit, so that 2,000 events overflow it and the socket buffer).
    @Test func fanOutDeliversEverythingAndLagsTheStalledOne() throws {
        let summary = try summary([
            "fan-out", "--subscribers", "3,6", "--event-rate", "1000", "--fanout-seconds", "2", "--queue-limit", "256",
        ])
        for (level, live) in [("3", 2), ("6", 5)] {
            let fanOut = try #require(summary.fanOut?[level])
            #expect(fanOut.events == 2_000)
            #expect(fanOut.missing == 0 && fanOut.disordered == 0 && fanOut.lagged == 0)
            #expect(fanOut.stalled == "lagged")
            #expect(fanOut.delivery.n == live * 20 && fanOut.delivery.p50 > 0)
        }
    }

    /// The same events to a few consumers through the socket and through a real nats-server: every consumer
    /// of each gets every change, and both report delivery and CPU.
    @Test func consumersGetEveryChangeThroughTheSocketAndJetStream() throws {
        let consumers = try #require(
            try summary(["consumers", "--consumers", "12", "--consumer-rate", "100", "--consumer-seconds", "2"])
                .consumers
        )
        #expect(consumers.consumers == 12 && consumers.events == 200)
        for arm in [consumers.socket, consumers.jetStream] {
            #expect(arm.expected == 2_400 && arm.delivered == arm.expected)
            #expect(arm.delivery.n > 0 && arm.delivery.p50 > 0 && arm.cpuNanoseconds > 0)
        }
        // Every socket subscriber times every transaction; the sampled JetStream consumers (10) too.
        #expect(consumers.socket.delivery.n == 12 * 2 && consumers.jetStream.delivery.n == 10 * 2)
    }

    /// Publishing to a real nats-server, small: every commit reaches the server, is stored (a pull consumer
    /// gets it) and is read by the pull phase's consumer; the backlog is published whole (the bench checks
    /// the stream holds every change once, and exits 1 otherwise).
    @Test func publishingLosesNothing() throws {
        let publish = try #require(
            try summary(["publish", "--count", "50", "--rate", "200", "--changes", "500", "--pull-rate", "300"])
                .publish
        )
        #expect(publish.latency.n == 50 && publish.missing == 0)
        #expect(publish.stored.n == 50 && publish.storedMissing == 0)
        #expect(publish.sustained > 0)
        #expect(publish.pull.n == 900 && publish.pullMissing == 0)
    }

    /// The history listing runs over two sizes and reports both (it exits 0 only when the listing did).
    @Test func historyListReportsBothSizes() throws {
        let points = try #require(try summary(["history-list", "--history", "3000"]).historyList)
        #expect(points.map(\.transactions) == [300, 3_000])
        #expect(points.allSatisfy { $0.peakRSSKilobytes > 0 })
    }

    /// The migrate scenario migrates its store (it checks every task got the new default) and reports.
    @Test func migrateReports() throws {
        let migrate = try #require(try summary(["migrate", "--migrate-rows", "2000"]).migrate)
        #expect(migrate.rows == 2_000)
        #expect(migrate.peakRSSKilobytes > 0)
    }

    @Test func writeOverheadAndIdleReport() throws {
        let overhead = try summary(["write-overhead", "--rows", "100"])
        #expect((overhead.writeOverhead?["legacy"]?.ratio ?? 0) > 0)
        #expect((overhead.writeOverhead?["new"]?.ratio ?? 0) > 0)
        let idle = try summary(["idle", "--idle-seconds", "1"])
        #expect(idle.idle?.seconds == 1)
    }

    /// The crash harness, short: coexistd killed with SIGKILL at random moments (some during start-up) while
    /// two random writers run; afterwards nothing is lost, doubled, echoed or parked.
    @Test func crashHarnessShortRun() throws {
        let seed = UInt64.random(in: 1...1_000_000)
        let result = try ProductProcess.run(
            "coexist-bench",
            ["crash", "--rounds", "12", "--writes", "120", "--seed", "\(seed)", "--model", Fixtures.demoModel]
        )
        #expect(result.status == 0, "seed \(seed): \(result.stdout)\(result.stderr)")
        #expect(result.stdout.hasPrefix("crash: passed: 12 SIGKILL rounds"), "seed \(seed): \(result.stdout)")
    }

    /// The crash harness on a copy of a real Core Data store (CoreDataPlus `SampleModel`: a compound
    /// uniqueness constraint, three levels of sub-entities, nullify), with writers that also swap and chain
    /// unique names and plates: `verify` equal, nothing parked.
    @Test func crashHarnessOnSampleModel() throws {
        let seed = UInt64.random(in: 1...1_000_000)
        let result = try ProductProcess.run(
            "coexist-bench",
            ["crash", "--rounds", "12", "--writes", "120", "--seed", "\(seed)", "--store", Fixtures.sampleModelV1]
        )
        #expect(result.status == 0, "seed \(seed): \(result.stdout)\(result.stderr)")
        #expect(result.stdout.hasPrefix("crash: passed: 12 SIGKILL rounds"), "seed \(seed): \(result.stdout)")
        #expect(result.stdout.contains(" 0 parked (0 park reports),"), "seed \(seed): \(result.stdout)")
    }

    /// The soak, short: honest subscribers complete, hostile ones closed, RSS reported.
    @Test func soakShortRun() throws {
        let result = try ProductProcess.run(
            "coexist-bench",
            ["soak", "--seconds", "6", "--subscribers", "20", "--rate", "50", "--model", Fixtures.demoModel]
        )
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.hasPrefix("soak: passed: 6 s, 20 subscribers"), "\(result.stdout)")
        #expect(result.stdout.contains("\"missing\":0"))
    }

    /// Backlogs are mirrored completely (the scenario itself checks every row arrived) and measured.
    @Test func throughputAndCatchUpReport() throws {
        let throughput = try summary(["throughput", "--changes", "200"])
        #expect(throughput.throughput?["rows1"]?.changes == 200)
        #expect(throughput.throughput?["rows100"]?.changes == 200)
        #expect((throughput.throughput?["rows1"]?.perSecond ?? 0) > 0)
        let catchUp = try summary(["catch-up", "--backlog", "300"])
        #expect(catchUp.catchUp?.changes == 300)
        #expect((catchUp.catchUp?.peakRSSKilobytes ?? 0) > 1_000)
    }

    @Test func unknownScenarioIsAUsageError() throws {
        let result = try ProductProcess.run("coexist-bench", ["fastest"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("unknown scenario fastest"))
    }
}
