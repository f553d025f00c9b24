import CoexistRuntime

extension HistoryCommand {
    /// The interface of `coexistctl history`: each verb's options under a heading of their own; an option
    /// two verbs share with different meanings (`--before`, `--into`) is listed under each.
    static let spec = CommandSpec(
        command: "coexistctl history",
        synopsis: [
            "list STORE [filters] [--limit N] [--model PATH] [--json]",
            "show STORE TOKEN [--model PATH] [--json]",
            "stats STORE [--days N] [--json]",
            """
            replay STORE --from TOKEN [--to TOKEN]
                                             (--events [--values] [--mirrors] | --into legacy|new [--dry-run]
                                              | --to-store OTHER) [--json]
            """,
            "export STORE [--since TOKEN] [--until TOKEN] [--output FILE]",
            "import FILE --into STORE",
            """
            prune STORE (--before TOKEN|TIME | --older-than AGE) [--dry-run] [--yes]
                                            [--ignore-consumers] [--json]
            """,
        ],
        description: """
            list   one line per transaction: token, time, side, author, process and change counts; with
                   --json, one JSON object per line (NDJSON). Streams: memory stays flat however long the history.
            show   one transaction with every change: entity, object key, type, changed properties (decoded
                   from ZCOLUMNS) and, for deletes, the preserved tombstone values
            stats  transactions and changes in total, per author, per entity and type, per day (the last N days
                   with any, default 30); first and last token and time; bytes of the history tables; the
                   oldest token the bridge or a durable consumer still needs
            replay --events: the range's transactions (--from and --to included) as the NDJSON events a
                   subscriber with since gets, from the event service's encoder (--values: with values;
                   --mirrors: the bridge's own mirror transactions too)
                   --into SIDE: re-applies every object the range touched, as of now, from the other side into
                   SIDE through the mirror code, recorded as the bridge's own transaction (a repair after a
                   divergence, a restored backup or a hand edit); run again, it writes nothing. Refused (exit 75)
                   while a coexistd serves the file; --dry-run lists the objects that differ and writes nothing
                   --to-store OTHER: replays the range's Core Data transactions, in token order, into OTHER, a
                   copy of the store taken earlier (objects keep their Z_PK), one save each with the same
                   author; values are the store's as of now (the history holds none); exit 1 when a change
                   could not be applied (each named)
            export the transactions as NDJSON, one per line with its changes (tombstone values, and the raw
                   columns an import needs), to standard output or a new FILE; read-only
            import an export into the history of STORE, a scratch store of the same model (coexistctl
                   create) whose history is empty or older, keeping the tokens, in one transaction: export,
                   import, export again gives the same bytes
            prune  delete old transactions (with their changes), but never one the bridge has not mirrored or a
                   durable consumer has not acknowledged (unless --ignore-consumers); prints each mark and who
                   holds the cut back. On a terminal it asks before deleting, unless --yes.
            """,
        options: filters + stats + replay + archive + prune + [
            .value("model", "PATH", "decode with this model instead of the store's Z_MODELCACHE"),
            .flag("json", "JSON output"),
        ]
    )

    /// The options each verb takes (the table is shared: an option of another verb is refused, not ignored).
    static let verbOptions: [String: Set<String>] = {
        let common: Set<String> = ["model", "json"]
        func names(_ options: [OptionSpec]) -> Set<String> { Set(options.map(\.name)) }
        return [
            "list": names(filters).union(common),
            "show": common,
            "stats": names(stats).union(common),
            "replay": names(replay).union(common),
            "export": names(archive).subtracting(["into"]).union(["model"]),
            "import": ["into"],
            "prune": names(prune).union(common),
        ]
    }()

    /// The filters of `history list`.
    private static let filters = grouped(
        "filters (list; a transaction is listed when it passes all of them)",
        [
            .value("since", "TOKEN", "tokens greater than TOKEN"),
            .value("until", "TOKEN", "tokens at most TOKEN"),
            .value(
                "after",
                "TIME",
                "saved at or after TIME: ISO-8601 (2025-01-01, 2025-01-01T10:30:00Z) or an age back from now (90s, "
                    + "30m, 2h, 7d, 2w)"
            ),
            .value("before", "TIME", "saved before TIME (as for --after)"),
            .value("author", "NAME", "the transaction's author"),
            .value("entity", "NAME", "a change to this entity or one of its sub-entities"),
            .value("type", "TYPE", "a change of this type: insert, update or delete (with --entity: to that entity)"),
            .value("side", "legacy|new", "saved by the Core Data side or the new schema's side"),
            .value("limit", "N", "at most N transactions"),
        ]
    )

    /// The option of `history stats`.
    private static let stats: [OptionSpec] = [
        .value("days", "N", "the per-day counts: the last N days (UTC) with transactions (default 30)", group: "stats")
    ]

    /// The options of `history replay`; the store may also be named as for `verify`.
    private static let replay =
        grouped(
            "replay",
            [
                .value("from", "TOKEN", "the first token of the range (required)"),
                .value("to", "TOKEN", "the last token of the range (default: the last one)"),
                .flag("events", "print the range as the NDJSON events a subscriber with since gets"),
                .flag("values", "with --events: events with values"),
                .flag("mirrors", "with --events: the bridge's own mirror transactions too"),
                .value(
                    "into",
                    "legacy|new",
                    "re-apply every object the range touched, as of now, from the other side into this side"
                ),
                .flag("dry-run", "with --into: list the objects of the range that differ; write nothing"),
                .value(
                    "to-store",
                    "OTHER",
                    "replay the range's Core Data transactions into OTHER, a copy of the store taken earlier"
                ),
            ] + StoreTarget.optionSpecs
        )

    /// The options of `history export` and `history import`.
    private static let archive = grouped(
        "export and import",
        [
            .value("since", "TOKEN", "export: the transactions after TOKEN"),
            .value("until", "TOKEN", "export: the transactions up to TOKEN, included"),
            .value("output", "FILE", "export: write to FILE, a new file (never overwritten), not to standard output"),
            .value("into", "STORE", "import, required: the store whose history the export goes into"),
        ]
    )

    /// The options of `history prune`.
    private static let prune = grouped(
        "prune",
        [
            .value("before", "TOKEN|TIME", "the transactions before TOKEN (or, given a time, saved before it)"),
            .value(
                "older-than",
                "AGE",
                "the transactions saved longer ago than AGE (30d), or before an ISO-8601 time"
            ),
            .flag("dry-run", "print the marks and what would go; opens the store read-only"),
            .flag("yes", "do not ask"),
            .flag(
                "ignore-consumers",
                "prune past durable consumers (they get token_expired; see coexistctl consumers)"
            ),
        ]
    )

    /// `options` listed under `group`.
    private static func grouped(_ group: String, _ options: [OptionSpec]) -> [OptionSpec] {
        options.map { $0.grouped(group) }
    }
}
