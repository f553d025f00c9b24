import CoexistBridge
import CoexistEvents
import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistRuntime
import CoexistSQLite
import Glibc

/// `coexistctl history replay STORE --from T [--to T] (--events [--values] | --into SIDE [--dry-run])`.
///
/// `--events` prints the range as the events a subscriber with `since` gets (`"mirrors":true` with
/// `--mirrors`), encoded by the event service's own encoder, on a read-only connection. `--into`
/// re-applies every object the range touched (either side) from the other side into SIDE, as of now,
/// through the mirror code and under the daemon's lock (``SyncEngine/repair(_:from:)``): a repair after a
/// divergence, a restored backup or a hand edit.
struct HistoryReplay {
    let target: StoreTarget
    /// The range: tokens from `from` through `to`, both included.
    let from: Int64
    let to: Int64

    init(_ parsed: ArgumentParser, target: StoreTarget) throws {
        self.target = target
        guard let from = try HistoryCommand.integer(parsed.option("from"), name: "--from") else {
            throw ArgumentParser.UsageError("replay needs --from TOKEN")
        }
        self.from = from
        to = try HistoryCommand.integer(parsed.option("to"), name: "--to") ?? .max
        guard to >= from else { throw ArgumentParser.UsageError("--to \(to) is before --from \(from)") }
    }

    /// Prints the events of the range, a page of transactions at a time.
    func events(values: Bool, mirrors: Bool) throws {
        let engine = try VerifyCommand.readOnlyEngine(target)
        let source = try EventSource(engine: engine)
        var position = from - 1
        var (transactions, events) = (0, 0)
        defer { StandardStreams.error("replayed \(events) events of \(transactions) transactions") }
        while position < to {
            let page = try source.transactions(after: position, through: to, limit: 64)
            guard let last = page.last else { return }
            transactions += page.count
            var text = ""
            for transaction in page {
                // As the server's default subscription: the bridge's own mirrors only when asked for.
                for event in try source.events(transaction, values: values) where mirrors || !event.isMirror {
                    events += 1
                    text += String(
                        decoding: (values ? event.withValues ?? event.plain : event.plain).array,
                        as: UTF8.self
                    )
                }
            }
            if !text.isEmpty { StandardStreams.out(String(text.dropLast())) }
            position = last.token
        }
    }

    /// Re-applies the range's objects into `side` (from the other side); with `dryRun`, lists the objects
    /// of the range that differ now and writes nothing. Returns the exit code.
    func into(_ side: Side, dryRun: Bool, json: Bool) throws -> ExitCode {
        let source: Side = side == .new ? .legacy : .new
        if dryRun {
            let engine = try VerifyCommand.readOnlyEngine(target)
            let line = ProgressLine()
            defer { line.finish() }
            let range = Self.range(from: from, to: to, last: try engine.lastToken())
            let touched = Set(
                try engine.objects(touchedAfter: from - 1, through: to) { token in
                    line.update("reading the range: token \(token)", fraction: range.fraction(token))
                }
            )
            var verifier = Verifier(engine: engine, limit: 0)
            var compared = false
            verifier.progress = { done, total in
                // The phase's first line at once (the reading's last one may have been drawn just before).
                line.update(
                    "comparing: \(done) of \(total) objects",
                    fraction: total > 0 ? Double(done) / Double(total) : nil,
                    force: !compared
                )
                compared = true
            }
            let report = try verifier.run()
            line.finish()
            // The verifier and the history may know an object by different halves of its pair.
            let legacy = Set(touched.compactMap(\.legacy))
            let new = Set(touched.compactMap(\.new))
            let differing = report.differing.filter { pair in
                pair.legacy.map(legacy.contains) == true || pair.new.map(new.contains) == true
            }
            let lines = differing.map { "  " + Self.describe($0) }
            if json {
                StandardStreams.out(
                    try JSONOutput.encode(
                        Plan(touched: touched.count, differing: differing.map(Self.describe), into: side.rawValue),
                        pretty: false
                    )
                )
            } else {
                StandardStreams.out(
                    "the range touched \(touched.count) objects; \(differing.count) of them differ and would be re-applied from the \(source) side into the \(side) side"
                        + (lines.isEmpty ? "" : ":\n" + lines.joined(separator: "\n"))
                )
            }
            return .success
        }
        let writer = try BridgeWriter(target)
        _ = try writer.engine.catchUp()  // what is pending is a change on its way, not a divergence
        let line = ProgressLine()
        defer { line.finish() }
        let range = Self.range(from: from, to: to, last: try writer.engine.lastToken())
        let pairs = try writer.engine.objects(touchedAfter: from - 1, through: to) { token in
            line.update("reading the range: token \(token)", fraction: range.fraction(token))
        }
        // One transaction: no progress within it, but the phase is shown while it runs.
        line.update("re-applying \(pairs.count) objects from the \(source) side", force: true)
        let result = try writer.engine.repair(pairs, from: source)
        line.finish()
        if json {
            StandardStreams.out(
                try JSONOutput.encode(
                    Applied(
                        objects: pairs.count,
                        applied: result.applied,
                        deleted: result.deleted,
                        tokens: result.tokens,
                        skipped: result.skipped
                    ),
                    pretty: false
                )
            )
        } else {
            let tokens =
                result.tokens.isEmpty
                ? "nothing written" : "transactions " + result.tokens.map(String.init).joined(separator: ", ")
            StandardStreams.out(
                "re-applied \(pairs.count - result.skipped.count) objects from the \(source) side into the \(side) side (\(result.applied) applied, \(result.deleted) deleted; \(tokens))"
            )
            for line in result.skipped { StandardStreams.out("  left as is: " + line) }
        }
        return .success
    }

    /// Replays the range's legacy transactions into the store at `other` (``StoreReplay``), under the
    /// daemon's lock on that file; the source is only read.
    func toStore(_ other: String, json: Bool) throws -> ExitCode {
        let source = try LegacyStore(path: target.database)
        guard
            realpath(other, nil).map({ String(cString: $0) })
                != realpath(target.database, nil).map({ String(cString: $0) })
        else { throw ArgumentParser.UsageError("--to-store names the store the range is read from") }
        let identity = try DatabaseFileIdentity(path: other)
        try identity.serveExclusively()
        let destination = try LegacyStore(path: other, options: OpenOptions())
        let progress = ProgressLine()
        defer { progress.finish() }
        let range = Self.range(from: from, to: to, last: try HistoryGaps.lastIssuedToken(source.connection))
        let result = try StoreReplay(source: source, target: destination).run(after: from - 1, through: to) { token in
            progress.update("replayed through token \(token)", fraction: range.fraction(token))
        }
        progress.finish()
        for line in result.skipped { StandardStreams.error("coexistctl history: skipped: \(line)") }
        if json {
            StandardStreams.out(
                try JSONOutput.encode(
                    Replayed(transactions: result.transactions, changes: result.changes, skipped: result.skipped),
                    pretty: false
                )
            )
        } else {
            StandardStreams.out(
                "replayed \(result.transactions) transactions (\(result.changes) changes) into \(other)"
                    + (result.skipped.isEmpty ? "" : "; \(result.skipped.count) changes skipped")
            )
        }
        return result.skipped.isEmpty ? .success : .failure
    }

    /// The tokens a range spans (through the store's last one when it is open-ended), for progress bars.
    struct Span {
        let first: Int64
        let last: Int64

        /// How far into the span `token` is (0…1).
        func fraction(_ token: Int64) -> Double? {
            guard last >= first else { return nil }
            // In doubles: a range given from a far negative token must not overflow.
            return (Double(token) - Double(first) + 1) / (Double(last) - Double(first) + 1)
        }
    }

    static func range(from: Int64, to: Int64, last: Int64) -> Span { Span(first: from, last: min(to, last)) }

    struct Replayed: Encodable {
        var transactions: Int
        var changes: Int
        var skipped: [String]
    }

    struct Plan: Encodable {
        var touched: Int
        var differing: [String]
        var into: String
    }

    struct Applied: Encodable {
        var objects: Int
        var applied: Int
        var deleted: Int
        var tokens: [Int64]
        var skipped: [String]
    }

    static func describe(_ pair: Verifier.ObjectPair) -> String {
        [pair.legacy.map { "\($0)" }, pair.new.map { "\($0)" }].compactMap { $0 }.joined(separator: " = ")
    }
}
