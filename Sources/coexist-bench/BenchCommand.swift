import CoexistRuntime

/// Parses the command line, runs the chosen scenarios, prints a table and a one-line JSON summary.
enum BenchCommand {
    static let usage = """
        usage: coexist-bench [latency|throughput|write-overhead|fan-out|catch-up|history-list|idle|migrate|
                              adapter-latency|adapter-fetch|adapter-enumerate|snapshot|publish|consumers|all]
                             [--model PATH] [--count N] [--rate N] [--rows N] [--changes N] [--fetch-rows N]
                             [--enumerate-rows N] [--snapshot-rows N] [--pull-rate N]
                             [--consumers N] [--consumer-rate N] [--consumer-seconds N]
                             [--subscribers N,N,...] [--event-rate N] [--fanout-seconds N] [--queue-limit N]
                             [--backlog N] [--history N] [--idle-seconds N] [--idle-subscribers N]
                             [--migrate-rows N]
               coexist-bench crash [--rounds N] [--writes N] [--seed N] [--model PATH | --store PATH]
               coexist-bench soak [--minutes N | --seconds N] [--subscribers N] [--rate N] [--model PATH]

          latency          commit → subscriber event and commit → mirror event, each direction
                           (--count transactions at --rate per second; defaults 10000 and 1000), with
                           --idle-subscribers more connections (default 0) subscribed to an entity no one
                           writes
          throughput       coexistd --once on a backlog of 1-row and of 100-row transactions (--changes
                           each, default 20000) vs raw batched inserts of the same rows, same run; and on
                           100-row update transactions of rows already mirrored vs raw updates of them
          write-overhead   one-row saves with history vs raw SQL inserts, each store (--rows, default 10000)
          fan-out          --subscribers (default 10,100,1000) on one coexistd, one of them stalled, while
                           a writer commits --event-rate Task inserts per second (default 10000, in 100-row
                           transactions) for --fanout-seconds (default 5): commit → event read, p50/p99;
                           every live subscriber must get every event in order, the stalled one "lagged"
                           (or all events, when they fit in its queue; --queue-limit: coexistd's, default
                           its own)
          catch-up         coexistd --once on a backlog of --backlog changes in 100-row transactions
                           (default 1000000): time and peak RSS
          history-list     coexistctl history list --json over --history transactions (default 1000000) and
                           a tenth of them: time and peak RSS (flat: the listing pages)
          idle             CPU per second of an idle coexistd with one subscriber (--idle-seconds, default 30)
          migrate          coexistctl migrate of a demo store (TaskModel → TaskModel 2) holding --migrate-rows
                           tasks on both sides (default 200000) vs its backup alone (VACUUM INTO) and one
                           INSERT … SELECT of every row it rebuilds (the set-based limit): time and peak RSS
          adapter-latency  a writer process sets one task's title --count times at --rate per second
                           (defaults 5000 and 1000); a context of the other process holds the task and
                           follows the file: commit → the held object shows the title, p50/p99. Without
                           coexistd (each stack its own writer, through the file) and through coexistd
                           (the other stack's writer, mirrored, through the socket); and the writer's
                           saves, each with the checkpoint its connection runs past 1,000 WAL pages
          consumers        the same events to --consumers (default 1000) through coexistd's socket and
                           through NATS JetStream (nats-server -js on a loopback port, push consumers), one
                           after the other: a writer commits --consumer-rate Task inserts per second (default
                           200, 100-row transactions) for --consumer-seconds (default 5); CPU per delivered
                           event of each (socket: the event service; JetStream: nats-server and the
                           publisher thread), commit → delivery p50/p99; every consumer must get every change
          adapter-fetch    each adapter's fetch of --fetch-rows tasks (default 10000) with a translated
                           predicate vs the same query in raw SQL decoding each row, medians and ratio
                           (the new adapter's with fields and with plain stored properties)
          adapter-enumerate  a process enumerates --enumerate-rows tasks (default 1000000) of the new schema
                           with enumerate(batchSize: 1000), and a tenth of them: time and peak RSS (flat)
          snapshot         a subscriber reads --snapshot-rows tasks (default 1000000) with "since":"snapshot"
                           vs the same rows read by raw SQL: rows per second of each
          publish          coexistd publishing to a nats-server it starts (Debian's): a writer commits
                           --count one-row transactions at --rate per second (defaults 2000 and 1000):
                           commit → message received by a subscriber, and → stored (delivered to a
                           pull consumer once the server stored it), p50/p99; then --changes inserts
                           (default 100000) in 100-row transactions: changes published per second, beside
                           the same client publishing as many (at most 20000) itself, acked one by one; then
                           --pull-rate changes per second (default 10000, 10-row transactions) for 3 s read
                           by a durable pull consumer: commit → delivery, p50/p99
          all              every scenario above but publish (the default)
          crash            SIGKILLs coexistd --rounds times (default 200) while two random writers make
                           --writes saves each (default 400), then checks that nothing was lost, doubled or
                           echoed; one summary line, exit 1 on a failure. --store: on a copy of that
                           Core Data store instead (CoreDataPlus SampleModel: the writers also swap and
                           chain unique names and plates)
          soak             --minutes (default 30; or --seconds) of a writer on each side (--rate one-row
                           transactions per second each, default 100), --subscribers peers (default 200:
                           half fast, a fifth slow, a tenth each never-reading, reconnecting, hostile) and a
                           SIGHUP every 10 s; every honest subscriber must get every transaction once, in
                           order, and the daemon's RSS must stay flat after the warm-up; exit 1 otherwise

          --model PATH     the model (default: config/TaskModel.xcdatamodeld)
        """

    static func run(_ arguments: [String]) throws -> ExitCode {
        let parsed = try ArgumentParser(
            arguments,
            flags: ["help"],
            options: [
                "model", "count", "rate", "rows", "idle-seconds", "rounds", "writes", "seed", "changes", "backlog",
                "history",
                "subscribers", "event-rate", "fanout-seconds", "queue-limit", "minutes", "seconds", "store",
                "migrate-rows", "fetch-rows", "enumerate-rows", "snapshot-rows", "pull-rate", "consumers",
                "consumer-rate",
                "consumer-seconds", "idle-subscribers",
            ]
        )
        if parsed.flag("help") {
            StandardStreams.out(usage)
            return .success
        }
        let scenario = try parsed.positionals(min: 0, max: 1).first ?? "all"
        let known = [
            "latency", "throughput", "write-overhead", "fan-out", "catch-up", "history-list", "idle", "migrate", "all",
            "adapter-latency", "adapter-fetch", "adapter-enumerate", "snapshot", "publish", "consumers",
            "crash",
            "soak",
        ]
        guard known.contains(scenario) else { throw ArgumentParser.UsageError("unknown scenario \(scenario)") }
        let model = parsed.option("model") ?? "config/TaskModel.xcdatamodeld"
        func number(_ name: String, _ fallback: Int) throws -> Int {
            guard let text = parsed.option(name) else { return fallback }
            guard let value = Int(text), value > 0 else {
                throw ArgumentParser.UsageError("--\(name) takes a positive integer")
            }
            return value
        }
        if scenario == "crash" {
            let result = try CrashScenario.run(
                modelPath: model,
                storePath: parsed.option("store"),
                rounds: try number("rounds", 200),
                writes: try number("writes", 400),
                seed: UInt64(try number("seed", 1))
            )
            StandardStreams.out(Report.crash(result))
            return result.passed ? .success : .failure
        }
        if scenario == "soak" {
            let result = try SoakScenario.run(
                modelPath: model,
                seconds: parsed.option("seconds") != nil ? try number("seconds", 60) : try number("minutes", 30) * 60,
                subscribers: try number("subscribers", 200),
                rate: try number("rate", 100)
            )
            StandardStreams.out(Report.soak(result))
            return result.passed ? .success : .failure
        }
        var report = Report()
        StandardStreams.out("machine: \(Report.machine())")
        if scenario == "latency" || scenario == "all" {
            let results = try LatencyScenario.run(
                modelPath: model,
                count: try number("count", 10_000),
                rate: try number("rate", 1_000),
                idle: try number("idle-subscribers", 0)
            )
            report.latency(results)
        }
        if scenario == "adapter-latency" || scenario == "all" {
            report.adapterLatency(
                try AdapterLatencyScenario.run(
                    modelPath: model,
                    count: try number("count", 5_000),
                    rate: try number("rate", 1_000)
                )
            )
        }
        if scenario == "publish" {
            report.publish(
                try PublishScenario.run(
                    modelPath: model,
                    count: try number("count", 2_000),
                    rate: try number("rate", 1_000),
                    changes: try number("changes", 100_000),
                    pullRate: try number("pull-rate", 10_000)
                )
            )
        }
        if scenario == "consumers" {
            report.consumers(
                try ConsumersScenario.run(
                    modelPath: model,
                    consumers: try number("consumers", 1_000),
                    eventRate: try number("consumer-rate", 200),
                    seconds: try number("consumer-seconds", 5)
                )
            )
        }
        if scenario == "adapter-fetch" || scenario == "all" {
            report.adapterFetch(try AdapterFetchScenario.run(modelPath: model, rows: try number("fetch-rows", 10_000)))
        }
        if scenario == "adapter-enumerate" || scenario == "all" {
            report.adapterEnumerate(
                try AdapterEnumerateScenario.run(
                    modelPath: model,
                    rows: try number("enumerate-rows", 1_000_000),
                    batchSize: 1_000
                )
            )
        }
        if scenario == "snapshot" || scenario == "all" {
            report.snapshot(try SnapshotScenario.run(modelPath: model, rows: try number("snapshot-rows", 1_000_000)))
        }
        if scenario == "throughput" || scenario == "all" {
            let changes = try number("changes", 20_000)
            report.throughput(
                try [1, 100].map { rows in
                    try ThroughputScenario.run(
                        modelPath: model,
                        rowsPerTransaction: rows,
                        transactions: max(1, changes / rows)
                    )
                }
            )
            report.updateThroughput(
                try UpdateThroughputScenario.run(
                    modelPath: model,
                    rowsPerTransaction: 100,
                    transactions: max(1, changes / 100)
                )
            )
        }
        if scenario == "write-overhead" || scenario == "all" {
            report.writeOverhead(try WriteOverheadScenario.run(modelPath: model, rows: try number("rows", 10_000)))
        }
        if scenario == "fan-out" || scenario == "all" {
            let levels = try (parsed.option("subscribers") ?? "10,100,1000").split(separator: ",").map { text in
                guard let level = Int(text), level >= 2 else {
                    throw ArgumentParser.UsageError("--subscribers takes counts of at least 2, comma-separated")
                }
                return level
            }
            report.fanOut(
                try FanOutScenario.run(
                    modelPath: model,
                    levels: levels,
                    eventRate: try number("event-rate", 10_000),
                    seconds: try number("fanout-seconds", 5),
                    queueLimit: parsed.option("queue-limit") == nil ? nil : try number("queue-limit", 10_000)
                )
            )
        }
        if scenario == "catch-up" || scenario == "all" {
            let backlog = try number("backlog", 1_000_000)
            report.catchUp(
                try ThroughputScenario.run(
                    modelPath: model,
                    rowsPerTransaction: 100,
                    transactions: max(1, backlog / 100)
                )
            )
        }
        if scenario == "history-list" || scenario == "all" {
            let largest = try number("history", 1_000_000)
            report.historyList(
                try HistoryListScenario.run(modelPath: model, sizes: [max(1, largest / 10), largest])
            )
        }
        if scenario == "idle" || scenario == "all" {
            report.idle(try IdleScenario.run(modelPath: model, seconds: try number("idle-seconds", 30)))
        }
        if scenario == "migrate" || scenario == "all" {
            report.migrate(try MigrateScenario.run(modelPath: model, rows: try number("migrate-rows", 200_000)))
        }
        StandardStreams.out(report.table)
        StandardStreams.out(report.json)
        return .success
    }
}
