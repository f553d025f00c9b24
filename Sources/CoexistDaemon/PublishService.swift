import CoexistBridge
import CoexistConfiguration
import CoexistEvents
import CoexistHistory
import CoexistLegacyStore
import CoexistPublish
import CoexistRuntime
import CoexistSQLite

#if canImport(Glibc)
import Glibc
#endif

/// The publisher's thread: every change committed to the file goes to a NATS JetStream stream, in token
/// order, exactly once.
///
/// It publishes each change, or each transaction, with a message id the server's duplicate window knows:
/// what the event service encoded (``feed``), or what it reads from the history on its own read-only
/// connection (it never writes the file). Its position is a durable consumer's (``consumerName``), posted
/// to the bridge service, the one writer, only once the server has acknowledged everything up to it:
/// history pruning waits for it, and a restart resumes from it.
/// What was acknowledged after the last durable position is found again in the stream itself (the id of its
/// last message from this store) and in memory after an outage, so nothing is published twice however long
/// the outage or the stop; nothing is skipped because the position only moves after acknowledgements.
///
/// What the event service reads and encodes for its subscribers comes to it through ``feed`` as soon as it is
/// encoded, and is published from there; it reads the history itself for what the feed cannot give (a
/// start, a range the event service skipped or failed to read, after a failure to publish or a migration,
/// an object not identified in both schemas yet taken late), at its check's timeout, and when
/// ``commitLanded()`` says the event service could not read a commit.
///
/// Waits in `poll(2)` on the feed's and ``commitLanded()``'s signals, a stop, and a timeout: after a failure
/// the next try comes after a backoff (250 ms doubling to 5 s), and the outage is logged.
final class PublishService: @unchecked Sendable {
    /// What the daemon's thread reads: the position and the lag, for `status` and `STATUS=`.
    struct Shared {
        /// The last token acknowledged by the server (every change up to it is in the stream).
        var position: Int64 = 0
        /// The last token committed to the file, as the service last read it.
        var last: Int64 = 0
        /// Messages acknowledged since the start.
        var published = 0
        var lastError: String?
        var stop = false
        /// Open the database again (the model changed: a migration).
        var reopen = false
        /// Publish nothing until ``reopen()`` (a migration runs).
        var held = false
        var started = false
        var failure: (any Error)?
        /// Read the history at the next wake-up (the feed cannot give everything).
        var historyDue = true
    }

    let shared = PthreadLocked(Shared())
    let wake: WakeSignal
    let started: WakeSignal
    var thread: WorkerThread?
    let configuration: DaemonConfiguration
    var settings: PublishConfiguration { configuration.publish }
    let consumers: ConsumerOutbox
    let logger: Logger
    let subjects: SubjectTemplate
    /// Owned by the thread once it runs.
    let stream: JetStream
    /// What the event service encoded, handed over for publishing (see ``EventFeed``).
    let feed: EventFeed

    /// The durable consumer name holding the publisher's position for `stream`.
    static func consumerName(_ stream: String) -> String { "coexist:publish:\(stream)" }

    /// Connects to the configured servers and creates or checks the stream; a failure is a configuration
    /// error naming the `[publish]` lines (coexistd exits 78 at start).
    static func connect(_ settings: PublishConfiguration) throws(ConfigError) -> JetStream {
        let stream: JetStream
        do {
            stream = try JetStream(
                servers: settings.servers,
                name: "coexistd",
                timeout: Int64(settings.timeout / 1_000_000),
                security: JetStream.Security(
                    credentials: settings.credentials,
                    caFile: settings.tlsCA,
                    certificateFile: settings.tlsCertificate,
                    keyFile: settings.tlsKey
                )
            )
        } catch {
            throw ConfigError(
                location: settings.location("nats-url"),
                message:
                    "cannot publish to \(settings.servers.map(PublishConfiguration.redacted).joined(separator: ", ")): \(error)"
            )
        }
        do {
            try stream.ensureStream(
                settings.stream,
                subject: SubjectTemplate(settings.subject).filter,
                replicas: settings.replicas,
                duplicateWindowSeconds: Int(settings.duplicateWindow / 1_000_000_000)
            )
        } catch {
            throw ConfigError(location: settings.location("stream"), message: "\(error)")
        }
        return stream
    }

    /// A service publishing with `stream` (connected by ``connect(_:)``), posting its positions to
    /// `consumers`.
    init(configuration: DaemonConfiguration, stream: JetStream, consumers: ConsumerOutbox, logger: Logger) throws {
        self.configuration = configuration
        self.stream = stream
        self.consumers = consumers
        self.logger = logger
        subjects = SubjectTemplate(configuration.publish.subject)
        let wake = try WakeSignal()
        self.wake = wake
        feed = EventFeed(values: configuration.publish.values, mirrors: configuration.publish.mirrors) {
            wake.signal()
        }
        started = try WakeSignal()
    }

    /// Starts the thread; returns once it has opened the database and read its position, or throws why it
    /// could not.
    func start() throws {
        thread = try ServiceThread.start(
            name: "coexist-publish",
            signal: started,
            state: { shared.withLock { ($0.started, $0.failure) } }
        ) { [self] in run() }
    }

    /// Stops the thread (after the message in progress) and waits for it.
    func stop() {
        shared.withLock { $0.stop = true }
        wake.signal()
        thread?.join()
        thread = nil
    }

    /// A commit landed that the event service could not read (or no event service runs): the history is read
    /// for it.
    func commitLanded() {
        shared.withLock { $0.historyDue = true }
        wake.signal()
    }

    /// A migration is about to run: nothing more is taken for publishing until ``reopen()`` (history
    /// committed by it must be read with the new model); what was taken before is sent and acknowledged.
    func hold() { shared.withLock { $0.held = true } }

    /// The model changed (a migration), or did not after all: the thread opens the database again before it
    /// reads on.
    func reopen() {
        shared.withLock {
            $0.reopen = true
            $0.held = false
            $0.historyDue = true
        }
        wake.signal()
    }

    /// Changes committed and not yet acknowledged by the server, in tokens.
    var lag: Int64 { shared.withLock { max(0, $0.last - $0.position) } }

    /// Where publishing stands within a transaction: every message up to (`token`, `index`) is in the
    /// stream (`index` nil: the whole transaction).
    struct Mark: Comparable {
        var token: Int64
        var index: Int?

        static func < (lhs: Mark, rhs: Mark) -> Bool {
            if lhs.token != rhs.token { return lhs.token < rhs.token }
            // nil (the whole transaction) is past every index of it.
            switch (lhs.index, rhs.index) {
            case (let left?, let right?): return left < right
            case (_?, nil): return true
            default: return false
            }
        }
    }

    struct State {
        var engine: SyncEngine
        var source: EventSource
        var store: String
        /// The position recorded durably (posted).
        var position: Int64
        /// The position acknowledged and not posted yet, and when the last was posted: positions are posted
        /// at most every ``postInterval`` (each is a write by the bridge service; the stream's last message
        /// says where a restart resumes anyway).
        var unposted: Int64?
        var postedAt: UInt64 = 0
        /// Everything up to it is in the stream (acknowledged, or found there).
        var mark: Mark
        var failing = false
        var backoff: UInt64 = 250_000_000
        var warning = RepeatingWarning()
        /// The largest message the server and the stream take (``messageLimit()``): a bigger message is
        /// replaced by a notice of its size.
        var maximumPayload: Int
        /// Messages in flight at most now: halved when another publisher's messages come in between, doubled
        /// back after as many acknowledged in a row.
        var window = PublishService.window
        var windowAcknowledged = 0
        /// The messages in flight and their acknowledgements.
        var pipeline: PublishPipeline
    }

    func run() {
        var state: State
        do {
            state = try open()
        } catch {
            shared.withLock { $0.failure = error }
            started.signal()
            return
        }
        shared.withLock {
            $0.started = true
            $0.position = state.position
        }
        started.signal()
        var timedOut = true
        while true {
            let (stop, reopen, held) = shared.withLock { ($0.stop, $0.reopen, $0.held) }
            if stop {
                flushPosition(&state)
                return
            }
            var ready = !held
            if reopen {
                do {
                    state.engine = try Daemon.openEventEngine(configuration)
                    state.source = try EventSource(engine: state.engine)
                    shared.withLock { $0.reopen = false }
                } catch {
                    note(failure: error, &state)
                    ready = false
                }
            }
            if ready {
                let historyDue = shared.withLock { shared in
                    defer { shared.historyDue = false }
                    return shared.historyDue
                }
                // At a timeout too: a commit the event service has not read yet (it retries at its own pace).
                if historyDue || timedOut || state.failing { publishPending(&state) }
                // Then what the event service handed over, at every wake-up (after a failure, a hold, the
                // history): what the feed cannot chain is read from the history.
                if !state.failing, !publishFed(&state) { publishPending(&state) }
            }
            var descriptor = pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0)
            flushPosition(&state, force: false)
            let check = state.failing ? state.backoff : configuration.pollInterval
            var timeout = check
            if state.unposted != nil { timeout = min(timeout, Self.postInterval) }
            // Armed, the feed's next transaction wakes this thread; one handed over meanwhile is taken now.
            if ready, !state.failing, !feed.arm() { timeout = 0 }
            // Only the check's timeout reads the history (not the position's, nor a zero one).
            timedOut = poll(&descriptor, 1, Int32(clamping: timeout / 1_000_000)) == 0 && timeout == check
            _ = wake.drain()
        }
    }

    /// Publishes every transaction after the mark, a page at a time, and posts the position after each page.
    func publishPending(_ state: inout State) {
        do {
            // The lag grows while the servers are away: the file's last token is read first.
            let last = try state.source.lastToken()
            shared.withLock { $0.last = last }
            if state.failing {
                // The stream may have been deleted meanwhile: created again (it is never changed otherwise).
                try stream.ensureStream(
                    settings.stream,
                    subject: subjects.filter,
                    replicas: settings.replicas,
                    duplicateWindowSeconds: Int(settings.duplicateWindow / 1_000_000_000)
                )
                try findInStream(&state)
                // Read again: a server reconnected to, or a stream changed by an operator, may take less (a
                // message refused for its size is then built again as a notice, instead of refused forever).
                state.maximumPayload = try messageLimit()
            }
            while state.mark.token < last || state.mark.index != nil {
                if shared.withLock({ $0.stop || $0.reopen || $0.held }) { return }
                let after = state.mark.index == nil ? state.mark.token : state.mark.token - 1
                // The page and its events in one read transaction (one snapshot, one set of WAL locks).
                let current = state
                let (page, pending) = try state.engine.connection.read {
                    try checkNotPruned(after: after, current.source)
                    let page = try current.source.transactions(after: after, through: last, limit: Self.page)
                    return (page, try page.flatMap { try self.pending($0, current) })
                }
                guard let final = page.last else {
                    // Nothing after the mark up to `last` (pruned: said above): the position moves to it.
                    state.mark = Mark(token: last, index: nil)
                    post(last, &state)
                    break
                }
                var outbox = Outbox()
                outbox.add(final.token, pending)
                try finish(&outbox, &state)
            }
            if state.failing {
                state.failing = false
                state.backoff = 250_000_000
                state.warning.recovered("publishing to stream \(settings.stream) works again", logger: logger)
                shared.withLock { $0.lastError = nil }
            }
        } catch {
            note(failure: error, &state)
        }
    }

    /// Thrown inside a page when the daemon stops: what was acknowledged is kept in the mark.
    struct Stopping: Error {}

    func note(failure error: any Error, _ state: inout State) {
        if error is Stopping { return }
        state.warning.occurred(
            "publishing to stream \(settings.stream) failed (retrying): \(error)",
            logger: logger,
            now: Monotonic.now(),
            fields: [.consumer: Self.consumerName(settings.stream)]
        )
        shared.withLock { $0.lastError = "\(error)" }
        if state.failing { state.backoff = min(state.backoff * 2, 5_000_000_000) }
        state.failing = true
    }
}
