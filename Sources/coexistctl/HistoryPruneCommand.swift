import CoexistBridge
import CoexistEvents
import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistRuntime
import CoexistSQLite
import Glibc

/// `coexistctl history prune`: what was asked, every mark that may hold the cut back (the bridge's cursor
/// and parked transactions, each durable consumer), what would go; then, unless it is a dry run, the cut.
struct HistoryPruneCommand {
    let path: String
    /// Transactions with a token at most this were asked for.
    let requestedToken: Int64
    /// And, with `--older-than` or a time for `--before`, saved before this (seconds since 2001).
    let requestedTime: Double?
    let dryRun: Bool
    let ask: Bool
    let ignoreConsumers: Bool
    let json: Bool

    init(_ parsed: ArgumentParser) throws {
        path = try parsed.positionals(min: 2, max: 2)[1]
        let now = TransactionWriter.now()
        switch (parsed.option("before"), parsed.option("older-than")) {
        case (let before?, nil):
            if let token = Int64(before) {
                guard token >= 0 else { throw ArgumentParser.UsageError("--before takes a token or a time") }
                requestedToken = token - 1
                requestedTime = nil
            } else {
                requestedToken = .max
                requestedTime = try TimeArgument.parse(before, option: "before", now: now)
            }
        case (nil, let age?):
            requestedToken = .max
            requestedTime = try TimeArgument.parse(age, option: "older-than", now: now)
        default:
            throw ArgumentParser.UsageError("prune needs one of --before TOKEN|TIME and --older-than AGE")
        }
        dryRun = parsed.flag("dry-run")
        ignoreConsumers = parsed.flag("ignore-consumers")
        json = parsed.flag("json")
        ask = !parsed.flag("yes") && !dryRun && isatty(STDIN_FILENO) == 1 && isatty(STDERR_FILENO) == 1
    }

    /// The marks and the counts, as printed.
    struct Plan: Encodable {
        struct Consumer: Encodable {
            var name: String
            var acked: Int64
            var lastSeen: String
            var holdsBack: Bool
        }
        var store: String
        var bridged: Bool
        /// The bridge's bound: its cursor, or just before its oldest parked transaction.
        var bridge: Int64?
        var consumers: [Consumer]
        var ignoreConsumers: Bool
        /// The cut: transactions with a token at most this (and older than `olderThan`) go.
        var through: Int64
        var olderThan: String?
        var heldBackBy: [String]
        var transactions: Int
        var changes: Int
        var oldestToken: Int64?
        var dryRun: Bool
        var pruned: Int?
    }

    func run(model: Model?) throws -> ExitCode {
        // Refuse anything but a Core Data store with persistent history before opening it for writing, so
        // that a refused file is left exactly as it was; a dry run never opens it for writing.
        let probe = try LegacyStore(path: path, model: model)
        guard probe.hasHistory else {
            throw LegacyStoreError.notCoreDataStore(
                path: path,
                reason: "no persistent-history tables (ATRANSACTION, ACHANGE)"
            )
        }
        var plan = try plan(probe.connection)
        if dryRun || plan.transactions == 0 {
            print(plan)
            return .success
        }
        if ask {
            print(plan)
            StandardStreams.prompt("delete \(plan.transactions) transactions from \(path)? [y/N] ")
            guard let answer = Swift.readLine(), ["y", "yes"].contains(answer.lowercased()) else {
                StandardStreams.error("nothing deleted")
                return .failure
            }
        }
        let connection = try Connection(path: path)
        // The marks again, in the write transaction that cuts: a consumer may have moved meanwhile.
        try connection.write {
            plan = try self.plan(connection)
            plan.pruned = try HistoryPruner.prune(connection, upTo: plan.through, olderThan: requestedTime)
        }
        plan.oldestToken = try HistoryPruner.oldestToken(connection)
        plan.dryRun = false
        print(plan)
        return .success
    }

    private func plan(_ connection: Connection) throws -> Plan {
        let bridged = try connection.tableExists("coexist_bridge")
        let bridge = try HistoryHolds.bridge(connection)
        // The last token asked for: with a time, the newest transaction saved before it.
        let wanted =
            try requestedTime.map {
                try connection.scalar("SELECT max(Z_PK) FROM ATRANSACTION WHERE ZTIMESTAMP < ?", [.real($0)])
                    .integerValue ?? 0
            } ?? requestedToken
        let consumers = try ConsumerTable.list(connection).map { consumer in
            Plan.Consumer(
                name: consumer.name,
                acked: consumer.acked,
                lastSeen: ReferenceDate.iso8601(secondsSince2001: consumer.updatedAt),
                holdsBack: !ignoreConsumers && consumer.acked < wanted
            )
        }
        var marks: [(who: String, token: Int64)] = consumers.filter(\.holdsBack).map {
            ("consumer \($0.name) (acknowledged \($0.acked))", $0.acked)
        }
        if let bridge, bridge < wanted { marks.append(("the bridge (mirrored through \(bridge))", bridge)) }
        let through = marks.map(\.token).min().map { min($0, wanted) } ?? wanted
        let heldBackBy = marks.filter { $0.token == through }.map(\.who)
        let condition = "Z_PK <= ?1" + (requestedTime == nil ? "" : " AND ZTIMESTAMP < ?2")
        var arguments: [SQLiteValue] = [.integer(through)]
        if let requestedTime { arguments.append(.real(requestedTime)) }
        let transactions = try connection.scalar("SELECT count(*) FROM ATRANSACTION WHERE \(condition)", arguments)
        let changes = try connection.scalar(
            "SELECT count(*) FROM ACHANGE WHERE ZTRANSACTIONID IN (SELECT Z_PK FROM ATRANSACTION WHERE \(condition))",
            arguments
        )
        let companion =
            try connection.tableExists("coexist_change")
            ? try connection.scalar(
                "SELECT count(*) FROM coexist_change WHERE token IN (SELECT Z_PK FROM ATRANSACTION WHERE \(condition))",
                arguments
            ).integerValue ?? 0 : 0
        return Plan(
            store: path,
            bridged: bridged,
            bridge: bridge,
            consumers: consumers,
            ignoreConsumers: ignoreConsumers,
            through: through,
            olderThan: requestedTime.map { ReferenceDate.iso8601(secondsSince2001: $0) },
            heldBackBy: heldBackBy,
            transactions: Int(transactions.integerValue ?? 0),
            changes: Int((changes.integerValue ?? 0) + companion),
            oldestToken: try HistoryPruner.oldestToken(connection),
            dryRun: dryRun,
            pruned: nil
        )
    }

    private func print(_ plan: Plan) {
        if json {
            StandardStreams.out((try? JSONOutput.encode(plan, pretty: false)) ?? "{}")
            return
        }
        var lines: [String] = []
        if !plan.bridged { lines.append("the bridge has never run on this store: only durable consumers hold it back") }
        if let bridge = plan.bridge { lines.append("bridge      mirrored through \(bridge)") }
        for consumer in plan.consumers {
            let note = consumer.holdsBack ? "" : plan.ignoreConsumers ? "  (ignored)" : ""
            lines.append(
                "consumer    \(consumer.name): acknowledged \(consumer.acked), last seen \(consumer.lastSeen)\(note)"
            )
        }
        let cut = plan.through == .max ? "every token" : "tokens through \(plan.through)"
        let age = plan.olderThan.map { ", saved before \($0)" } ?? ""
        if !plan.heldBackBy.isEmpty { lines.append("held back by " + plan.heldBackBy.joined(separator: ", ")) }
        if let pruned = plan.pruned {
            let oldest = plan.oldestToken.map(String.init) ?? "none"
            lines.append("pruned \(pruned) transactions (\(cut)\(age)); oldest token now \(oldest)")
        } else {
            let verb = plan.dryRun ? "would prune" : plan.transactions == 0 ? "nothing to prune:" : "to prune:"
            lines.append("\(verb) \(plan.transactions) transactions, \(plan.changes) changes (\(cut)\(age))")
        }
        StandardStreams.out(lines.joined(separator: "\n"))
    }
}
