/// The configuration file coexist ships (`config/coexistd.conf`, installed as `/etc/coexist/coexistd.conf`):
/// every key with its default and what it does. A test holds the file to this text and both to the key
/// table; coexistd.conf(5) is made from it.
public enum DocumentedConfiguration {
    /// The file's text.
    public static let text = #"""
        # coexistd configuration. Every key is shown with its default; every key can also be given on the command
        # line (--database PATH, --conflict-policy new-wins, ...), which overrides this file. Lines are
        # "key = value" (LF or CRLF line ends; each key once per section); a line starting with # is a comment.
        # Errors name this file and the line, and coexistd exits 78 (EX_CONFIG), or 66 when the database or model
        # it names does not exist. `coexistd --check-config --config FILE` checks a file without starting.
        #
        # Keys marked (reload) take effect on SIGHUP (systemctl reload coexistd); the others need a restart, and a
        # reload that changes them says so in the log.

        # The shared SQLite file: a Core Data store. Required.
        database = /var/lib/coexist/Store.sqlite

        # The app's Core Data model (.xcdatamodeld folder, .xcdatamodel folder or contents file). Empty: the
        # store's own model (Z_MODELCACHE). When given, it must match the store's, or coexistd refuses to start.
        model =

        # A store at an older version of the model's .xcdatamodeld: off refuses to start, naming the coexistctl
        # migrate command; lightweight migrates it at start (after a backup beside it, each step logged) when every
        # step is lightweight (inferred, no mapping model), and refuses otherwise.
        auto-migrate = off

        # The Unix socket for subscribers. Ignored when systemd passes the socket (coexistd.socket).
        socket = /run/coexist/coexist.sock

        # The socket file's mode (octal) and numeric group (empty: the daemon's own group).
        socket-mode = 0660
        socket-group =

        # When both sides changed the same property of the same object since the last mirrored state:
        # later-wins (the change with the higher history token), legacy-wins or new-wins. (reload)
        conflict-policy = later-wins

        # At most this many source transactions are mirrored per SQLite write transaction (one snapshot: the
        # objects they touched made equal to their latest state); a pass also stops at about 4,000 changes. (reload)
        batch-size = 1024

        # Objects copied per write transaction by the initial sync of a store whose data is on one side only.
        # (reload)
        initial-sync-chunk = 500

        # History older than this, once mirrored, is pruned (durations: 500ms, 30s, 15m, 12h, 7d; 0 keeps all).
        # (reload)
        history-retention = 0

        # The fallback check for commits when no file event arrives. (reload)
        poll-interval = 1s

        # Parked transactions (see coexistctl verify and status) are mirrored again once both sides are caught up:
        # a second after a pass mirrored something, and at least this often (1s to 1h). (reload)
        parked-retry-interval = 30s

        # How long a blocked database statement retries (with backoff) before reporting SQLITE_BUSY.
        busy-timeout = 5s

        # Each of the daemon's two connections keeps up to this many KiB of database pages in memory (SQLite's
        # page cache); larger avoids re-reading pages while mirroring large tables.
        cache-size = 8192

        # error, warning, notice, info or debug. (reload)
        log-level = info

        # The author of the bridge's own transactions; transactions by this author are never mirrored back.
        author = coexistd

        # The bundle identifier recorded with the bridge's transactions (Core Data always records one); empty: the
        # author.
        bundle-id =

        # Who may use the socket beyond its file mode: when either list is set (comma-separated numeric ids), a
        # peer's uid or gid (SO_PEERCRED) must be in one of them. Empty: the file mode decides. (reload)
        allow-uids =
        allow-gids =

        # Connections served at once; a request line's maximum length in bytes; the time a request line may take
        # to arrive. (reload)
        max-clients = 1024
        max-line-length = 65536
        request-timeout = 10s

        # A snapshot subscription ("since":"snapshot") must read all its rows within this time: its read
        # transaction holds checkpoints back meanwhile. Past it, it ends with "snapshot_unavailable". (reload)
        snapshot-max-duration = 30m

        # Events queued for one subscriber before it is sent "lagged" (with its last delivered token) and
        # disconnected; it resumes from that token. (reload)
        queue-limit = 10000

        # Bytes queued for one connection (events, replies, heartbeats) before it is disconnected: a subscriber
        # with "lagged", a connection that does not read its replies with "over_budget". And the bytes queued
        # for all connections together (a message shared by N subscribers counts N times); the connection whose
        # message would pass it is treated as over its own budget. (reload)
        queue-bytes = 16777216
        total-queue-bytes = 1073741824

        # "wait" requests one connection may have pending; one more closes it with "over_budget". (reload)
        max-pending-requests = 1024

        # Durable consumers (named subscriptions) heard from within consumer-expiry; a new name beyond them is
        # refused with "too_many_consumers". 0: no durable consumers. (reload)
        max-consumers = 64

        # Subscribers get a heartbeat with the current token this often. (reload)
        heartbeat-interval = 5s

        # A durable consumer not heard from (subscribe or ack) for longer than this no longer holds history back
        # from pruning (logged) nor counts against max-consumers; 0: never. (reload)
        consumer-expiry = 7d

        # Publishing every change to a NATS JetStream stream, for consumers on other machines: off while
        # nats-url is empty. Each change (or transaction) is one message, the socket protocol's event JSON,
        # with the headers Nats-Msg-Id (the store's UUID, the token and the change's index: the server drops a
        # copy published again within duplicate-window), Coexist-Token, Coexist-Store, Coexist-Entity,
        # Coexist-Change, Coexist-Side and Coexist-Author. Changes go out in token order. The position is kept
        # in the file as the durable consumer "coexist:publish:STREAM" and moves only once the server has
        # acknowledged, so history pruning waits for it and nothing is lost while the servers are away (the
        # publish lag shows in coexistctl status); what was acknowledged after it is found in the stream's last
        # message, so a restart publishes nothing twice. A change to this section takes effect at the next start.
        [publish]

        # The NATS servers, comma-separated (nats://host:4222 or tls://host:4222; the others are tried when one
        # fails). At start, servers that cannot be reached, refused credentials or a stream that does not take
        # the subjects stop coexistd (exit 78); once running, an outage is retried and logged.
        nats-url =

        # The stream: created when absent, with the subjects of the template (each token holding a placeholder
        # becomes *), these replicas and this duplicate window (1s to 3650d); an existing stream is never
        # changed.
        stream = coexist
        replicas = 1
        duplicate-window = 2m

        # The subject template: {store}, {entity}, {change} (insert, update, delete) and {side} (legacy, new)
        # stand for the change's (with framing = transaction, for a value every change shares, else _).
        subject = coexist.{store}.{entity}.{change}

        # event: one message per change; transaction: one per transaction ("framing":"transaction").
        framing = event

        # Messages carry the objects' values; the bridge's mirror transactions are published too.
        values = false
        mirrors = false

        # A NATS credentials file; TLS: CA certificates to trust, the client's certificate chain and key (PEM).
        credentials =
        tls-ca =
        tls-certificate =
        tls-key =

        # How long connecting or a publish's acknowledgement may take before it is tried again.
        timeout = 5s

        # Names of the new schema can be overridden per entity:
        #
        # Names are plain identifiers (ASCII letters, digits and _), checked against the model at start and by
        # --check-config: an entity or property the model does not have is an error.
        #
        # [entity Task]
        # table = todo
        # identity = uuid              (the attribute holding the object's UUID, when it is not a UUID named id)
        # column.title = name          (column for property `title`)

        # A migration step can be given values for destination properties, for what the inferred mapping gets
        # wrong or cannot do (coexistctl migrate --config and a migrating coexistd use them; auto-migrate never
        # does). A value is $source.key.path (from the source object, through to-ones), a number, true, false,
        # null or a "string". A step Core Data could not infer runs when a transform covers it.
        #
        # [migration TaskModel -> TaskModel 2]
        # Task.priority = 1
        # Task.notes = $source.title
        """#
}
