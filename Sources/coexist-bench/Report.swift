#if canImport(Glibc)
import Glibc
#endif

/// The figures of a run, as an aligned table and as one JSON object.
struct Report {
    // Internal, not private: the extensions in other files add to them.
    var rows: [(String, String, String)] = []
    var fields: [String] = []

    static func micros(_ nanoseconds: Int64) -> String {
        let value = Double(nanoseconds) / 1_000
        return value < 10 ? "\(Double(Int(value * 10)) / 10) µs" : "\(Int(value.rounded())) µs"
    }

    static func distribution(_ value: Measure.Distribution) -> String {
        "p50 \(micros(value.p50))  p90 \(micros(value.p90))  p99 \(micros(value.p99))  max \(micros(value.max))"
    }

    static func json(_ value: Measure.Distribution) -> String {
        "{\"n\":\(value.count),\"p50\":\(value.p50),\"p90\":\(value.p90),\"p99\":\(value.p99),\"max\":\(value.max)}"
    }

    mutating func latency(_ results: [LatencyScenario.Result]) {
        var sides: [String] = []
        for result in results {
            let other = result.side == "legacy" ? "new" : "legacy"
            rows.append(
                ("latency", "\(result.side) commit → event (n \(result.event.count))", Self.distribution(result.event))
            )
            rows.append(
                (
                    "latency", "\(result.side) commit → \(other) mirror event (n \(result.mirror.count))",
                    Self.distribution(result.mirror)
                )
            )
            rows.append(
                (
                    "latency", "\(result.side) save → \(other) mirror save (n \(result.mirroredRow.count))",
                    Self.distribution(result.mirroredRow)
                )
            )
            sides.append(
                "\"\(result.side)\":{\"event\":\(Self.json(result.event)),\"mirror\":\(Self.json(result.mirror)),"
                    + "\"mirroredRow\":\(Self.json(result.mirroredRow)),\"missing\":\(result.missing)}"
            )
        }
        fields.append("\"latency\":{" + sides.joined(separator: ",") + "}")
    }

    mutating func adapterLatency(_ results: [AdapterLatencyScenario.Result]) {
        var entries: [String] = []
        for result in results {
            rows.append(
                (
                    "adapter-latency",
                    "\(result.label) shows it (n \(result.shown.count))",
                    Self.distribution(result.shown)
                )
            )
            rows.append(
                ("adapter-latency", "  the writer's save, auto-checkpoint included", Self.distribution(result.save))
            )
            entries.append(
                "{\"case\":\"\(result.label)\",\"shown\":\(Self.json(result.shown)),\"save\":\(Self.json(result.save)),"
                    + "\"missing\":\(result.missing)}"
            )
        }
        fields.append("\"adapterLatency\":[" + entries.joined(separator: ",") + "]")
    }

    mutating func adapterFetch(_ results: [AdapterFetchScenario.Result]) {
        var entries: [String] = []
        for result in results {
            let ratio = Double(Int(result.ratio * 100)) / 100
            rows.append(
                (
                    "adapter-fetch",
                    "\(result.side) adapter fetch vs raw SQL + decoding (\(result.rows) rows)",
                    "median \(Self.micros(result.adapter)) vs \(Self.micros(result.raw)): × \(ratio)"
                )
            )
            entries.append(
                "\"\(result.side)\":{\"rows\":\(result.rows),\"adapter\":\(result.adapter),\"raw\":\(result.raw),\"ratio\":\(ratio)}"
            )
        }
        fields.append("\"adapterFetch\":{" + entries.joined(separator: ",") + "}")
    }

    mutating func writeOverhead(_ results: [WriteOverheadScenario.Result]) {
        var sides: [String] = []
        for result in results {
            let ratio = Double(Int(result.ratio * 100)) / 100
            rows.append(
                (
                    "write-overhead",
                    "\(result.side) save vs raw insert (n \(result.store.count))",
                    "median \(Self.micros(result.store.p50)) vs \(Self.micros(result.raw.p50)): × \(ratio)"
                )
            )
            sides.append(
                "\"\(result.side)\":{\"store\":\(Self.json(result.store)),\"raw\":\(Self.json(result.raw)),\"ratio\":\(ratio)}"
            )
        }
        fields.append("\"writeOverhead\":{" + sides.joined(separator: ",") + "}")
    }

    mutating func throughput(_ results: [ThroughputScenario.Result]) {
        var entries: [String] = []
        for result in results {
            let ratio = Double(Int(result.ratio * 1_000)) / 1_000
            let limitRatio = Double(Int(result.limitRatio * 1_000)) / 1_000
            rows.append(
                (
                    "throughput",
                    "\(result.rowsPerTransaction)-row transactions mirrored (n \(result.changes))",
                    "\(Int(result.rate)) changes/s vs raw insert \(Int(result.rawRate))/s: × \(ratio); "
                        + "set-based limit \(Int(result.limitRate))/s: × \(limitRatio)"
                )
            )
            entries.append(
                "\"rows\(result.rowsPerTransaction)\":{\"changes\":\(result.changes),\"perSecond\":\(Int(result.rate)),"
                    + "\"rawPerSecond\":\(Int(result.rawRate)),\"ratio\":\(ratio),"
                    + "\"limitPerSecond\":\(Int(result.limitRate)),\"limitRatio\":\(limitRatio)}"
            )
        }
        fields.append("\"throughput\":{" + entries.joined(separator: ",") + "}")
    }

    mutating func updateThroughput(_ result: UpdateThroughputScenario.Result) {
        let ratio = Double(Int(result.ratio * 1_000)) / 1_000
        rows.append(
            (
                "throughput",
                "\(result.rowsPerTransaction)-row update transactions mirrored (n \(result.changes))",
                "\(Int(result.rate)) changes/s vs raw update \(Int(result.rawRate))/s: × \(ratio)"
            )
        )
        fields.append(
            "\"updateThroughput\":{\"changes\":\(result.changes),\"perSecond\":\(Int(result.rate)),"
                + "\"rawPerSecond\":\(Int(result.rawRate)),\"ratio\":\(ratio)}"
        )
    }

    mutating func fanOut(_ results: [FanOutScenario.Result]) {
        var entries: [String] = []
        for result in results {
            let complete = result.missing == 0 && result.disordered == 0 && result.laggedLive == 0
            rows.append(
                (
                    "fan-out",
                    "\(result.subscribers) subscribers (1 stalled), \(result.eventRate) events/s (n \(result.delivery.count))",
                    Self.distribution(result.delivery)
                        + (complete
                            ? "; all delivered"
                            : "; \(result.missing) missing, \(result.disordered) out of order, \(result.laggedLive) lagged")
                        + [
                            .lagged: "; stalled one lagged", .complete: "; stalled one got all (fitted in its queue)",
                            .incomplete: "; stalled one LOST EVENTS",
                        ][result.stalled, default: ""]
                        + "; daemon CPU \(Self.perEvent(result.daemonCPU, result.delivered)) ns per delivered event "
                        + "(event service \(Self.perEvent(result.eventServiceCPU, result.delivered)) ns)"
                )
            )
            entries.append(
                "\"\(result.subscribers)\":{\"eventRate\":\(result.eventRate),\"events\":\(result.events),"
                    + "\"delivery\":\(Self.json(result.delivery)),\"missing\":\(result.missing),"
                    + "\"disordered\":\(result.disordered),\"lagged\":\(result.laggedLive),"
                    + "\"stalled\":\"\(result.stalled.rawValue)\",\"delivered\":\(result.delivered),"
                    + "\"daemonCPUNanoseconds\":\(result.daemonCPU),\"eventServiceCPUNanoseconds\":\(result.eventServiceCPU)}"
            )
        }
        fields.append("\"fanOut\":{" + entries.joined(separator: ",") + "}")
    }

    /// CPU nanoseconds per event, rounded (0 without events).
    static func perEvent(_ nanoseconds: Int64, _ events: Int) -> Int64 {
        events > 0 ? (nanoseconds + Int64(events) / 2) / Int64(events) : 0
    }

    mutating func catchUp(_ result: ThroughputScenario.Result) {
        let seconds = Double(Int(result.seconds * 10)) / 10
        rows.append(
            (
                "catch-up", "backlog of \(result.changes) changes (100-row transactions)",
                "\(seconds) s, peak RSS \(result.peakKilobytes / 1024) MiB"
            )
        )
        fields.append(
            "\"catchUp\":{\"changes\":\(result.changes),\"seconds\":\(seconds),\"peakRSSKilobytes\":\(result.peakKilobytes)}"
        )
    }

    mutating func snapshot(_ result: SnapshotScenario.Result) {
        let perSecond = Int(Double(result.rows) / max(result.snapshotSeconds, 1e-9))
        let rawPerSecond = Int(Double(result.rows) / max(result.rawSeconds, 1e-9))
        rows.append(
            (
                "snapshot", "\"since\":\"snapshot\" of \(result.rows) tasks to one subscriber vs raw SQL",
                "\(perSecond) rows/s vs \(rawPerSecond) rows/s"
            )
        )
        fields.append(
            "\"snapshot\":{\"rows\":\(result.rows),\"rowsPerSecond\":\(perSecond),\"rawRowsPerSecond\":\(rawPerSecond)}"
        )
    }

    mutating func adapterEnumerate(_ points: [AdapterEnumerateScenario.Point]) {
        for point in points {
            rows.append(
                (
                    "adapter-enumerate", "enumerate(batchSize:) of \(point.rows) tasks (SwiftData side)",
                    "\(Double(Int(point.seconds * 10)) / 10) s, peak RSS \(point.peakKilobytes / 1024) MiB"
                )
            )
        }
        let entries = points.map {
            "{\"rows\":\($0.rows),\"seconds\":\(Double(Int($0.seconds * 10)) / 10),\"peakRSSKilobytes\":\($0.peakKilobytes)}"
        }
        fields.append("\"adapterEnumerate\":[" + entries.joined(separator: ",") + "]")
    }

    mutating func historyList(_ points: [HistoryListScenario.Point]) {
        for point in points {
            let seconds = Double(Int(point.seconds * 10)) / 10
            rows.append(
                (
                    "history-list", "coexistctl history list --json, \(point.transactions) transactions",
                    "\(seconds) s, peak RSS \(point.peakKilobytes / 1024) MiB"
                )
            )
        }
        let entries = points.map {
            "{\"transactions\":\($0.transactions),\"seconds\":\(Double(Int($0.seconds * 10)) / 10),\"peakRSSKilobytes\":\($0.peakKilobytes)}"
        }
        fields.append("\"historyList\":[" + entries.joined(separator: ",") + "]")
    }

    mutating func migrate(_ result: MigrateScenario.Result) {
        func hundredths(_ value: Double) -> Double { Double(Int(value * 100)) / 100 }
        let limit = result.backupSeconds + result.copySeconds + result.checkSeconds
        rows.append(
            (
                "migrate", "coexistctl migrate, TaskModel → TaskModel 2, \(result.rows) tasks on both sides",
                "\(hundredths(result.seconds)) s; its unavoidable parts alone: backup \(hundredths(result.backupSeconds)) s, "
                    + "one copy of every rebuilt row \(hundredths(result.copySeconds)) s, integrity_check "
                    + "\(hundredths(result.checkSeconds)) s (× \(hundredths(result.seconds / max(limit, 1e-9))) their sum); "
                    + "peak RSS \(result.peakKilobytes / 1024) MiB"
            )
        )
        fields.append(
            "\"migrate\":{\"rows\":\(result.rows),\"seconds\":\(hundredths(result.seconds)),\"backupSeconds\":"
                + "\(hundredths(result.backupSeconds)),\"copySeconds\":\(hundredths(result.copySeconds)),\"checkSeconds\":"
                + "\(hundredths(result.checkSeconds)),\"peakRSSKilobytes\":\(result.peakKilobytes)}"
        )
    }

    mutating func idle(_ result: IdleScenario.Result) {
        let perSecond = Double(Int(result.cpuNanosecondsPerSecond / 1_000)) / 1_000
        rows.append(
            (
                "idle", "coexistd CPU over \(result.seconds) s",
                "\(perSecond) ms/s, peak RSS \(result.peakRSSKilobytes / 1024) MiB"
            )
        )
        fields.append(
            "\"idle\":{\"seconds\":\(result.seconds),\"cpuPerSecond\":\(Int(result.cpuNanosecondsPerSecond)),\"peakRSSKilobytes\":\(result.peakRSSKilobytes)}"
        )
    }

    /// The crash harness's one summary line.
    static func crash(_ result: CrashScenario.Result) -> String {
        "crash: \(result.passed ? "passed" : "FAILED"): \(result.rounds) SIGKILL rounds, \(result.sources) source "
            + "transactions, \(result.mirrors) mirrored (\(result.mirrorTransactions) mirror transactions, "
            + "\(result.mirrorTokens) of them recorded), \(result.echoes) echoes, \(result.parked) parked "
            + "(\(result.everParked) park reports), cursor \(result.cursorAtEnd ? "at" : "NOT at") the "
            + "last token, verify \(result.verifyEqual ? "equal" : "DIFFERENT")"
    }

    /// The soak's one-line summary and its JSON.
    static func soak(_ result: SoakScenario.Result) -> String {
        let line =
            "soak: \(result.passed ? "passed" : "FAILED"): \(result.seconds) s, \(result.subscribers) subscribers, "
            + "\(result.transactions) transactions, \(result.complete) of \(result.honest) honest subscribers complete "
            + "(\(result.missing) missing, \(result.disordered) out of order, \(result.lags) lags resumed), "
            + (result.incomplete.isEmpty
                ? ""
                : "incomplete: "
                    + result.incomplete.sorted { $0.key < $1.key }.map {
                        "\($0.key) \($0.value) (\(result.missingByKind[$0.key] ?? 0) transactions behind)"
                    }
                    .joined(separator: ", ") + "; ")
            + "\(result.hostileConnections) hostile connections, \(result.reloads) SIGHUPs; daemon RSS "
            + "\(result.rssWarm) kB after warm-up, max \(result.rssMax), end \(result.rssEnd) "
            + "(\(result.flat ? "flat" : "GROWING")), CPU \((result.cpuPercent * 10).rounded() / 10) %; RSS trend (kB) "
            + result.rssTrend.map(String.init).joined(separator: " ")
        let json =
            #"{"soak":{"seconds":\#(result.seconds),"subscribers":\#(result.subscribers),"honest":\#(result.honest),"#
            + #""complete":\#(result.complete),"missing":\#(result.missing),"disordered":\#(result.disordered),"#
            + #""lags":\#(result.lags),"transactions":\#(result.transactions),"reloads":\#(result.reloads),"#
            + #""hostileConnections":\#(result.hostileConnections),"rssWarmKilobytes":\#(result.rssWarm),"#
            + #""rssMaxKilobytes":\#(result.rssMax),"rssEndKilobytes":\#(result.rssEnd),"flat":\#(result.flat),"#
            + #""rssTrendKilobytes":[\#(result.rssTrend.map(String.init).joined(separator: ","))],"#
            + #""cpuPercent":\#(result.cpuPercent),"passed":\#(result.passed)}}"#
        return line + "\n" + json
    }

    var table: String {
        let first = rows.map(\.0.count).max() ?? 0
        let second = rows.map(\.1.count).max() ?? 0
        return rows.map { row in
            row.0.padding(first) + "  " + row.1.padding(second) + "  " + row.2
        }
        .joined(separator: "\n")
    }

    /// Times are in nanoseconds.
    var json: String {
        "{" + (["\"machine\":\"\(Self.machine())\"", "\"unit\":\"ns\""] + fields).joined(separator: ",") + "}"
    }

    /// Cores and kernel, for the record.
    static func machine() -> String {
        var names = utsname()
        uname(&names)
        let release = withUnsafeBytes(of: names.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return "\(sysconf(Int32(_SC_NPROCESSORS_ONLN))) cores, Linux \(release)"
    }
}

extension String {
    fileprivate func padding(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
