import CoexistBridge
import CoexistConfiguration
import CoexistEvents
import CoexistHistory
import CoexistLegacyStore
import CoexistPublish
import CoexistRuntime
import CoexistSQLite
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The publisher's thread: every change committed to the file goes to a NATS JetStream stream, in token
/// order, exactly once.
///
/// It reads the history on its own read-only connection (it never writes the file) and publishes each
/// change, or each transaction, with a message id the server's duplicate window knows. Its position is a
/// durable consumer's (``consumerName``), posted to the bridge service, the one writer, only once the server
/// has acknowledged everything up to it: history pruning waits for it, and a restart resumes from it.
/// What was acknowledged after the last durable position is found again in the stream itself (the id of its
/// last message from this store) and in memory after an outage, so nothing is published twice however long
/// the outage or the stop; nothing is skipped because the position only moves after acknowledgements.
///
/// Waits in `poll(2)` on ``commitLanded()`` signals (from the daemon's commit watcher), a stop, and a timeout:
/// after a failure the next try comes after a backoff (250 ms doubling to 5 s), and the outage is logged.
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
    }

    let shared = Mutex(Shared())
    private let wake: WakeSignal
    private let started: WakeSignal
    private var thread: WorkerThread?
    private let configuration: DaemonConfiguration
    private var settings: PublishConfiguration { configuration.publish }
    private let consumers: ConsumerOutbox
    private let logger: Logger
    private let subjects: SubjectTemplate
    /// Owned by the thread once it runs.
    private let stream: JetStream

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
        wake = try WakeSignal()
        started = try WakeSignal()
    }

    /// Starts the thread; returns once it has opened the database and read its position, or throws why it
    /// could not.
    func start() throws {
        thread = try WorkerThread(name: "coexist-publish") { [self] in run() }
        while true {
            var descriptor = pollfd(fd: started.descriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, 100)
            let (isStarted, failure) = shared.withLock { ($0.started, $0.failure) }
            if let failure {
                thread?.join()
                thread = nil
                throw failure
            }
            if isStarted { return }
        }
    }

    /// Stops the thread (after the message in progress) and waits for it.
    func stop() {
        shared.withLock { $0.stop = true }
        wake.signal()
        thread?.join()
        thread = nil
    }

    /// A commit landed: publish it.
    func commitLanded() { wake.signal() }

    /// A migration is about to run: nothing is published until ``reopen()`` (history committed by it must
    /// be read with the new model).
    func hold() { shared.withLock { $0.held = true } }

    /// The model changed (a migration), or did not after all: the thread opens the database again before it
    /// reads on.
    func reopen() {
        shared.withLock {
            $0.reopen = true
            $0.held = false
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

    private struct State {
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
        /// The server's largest payload: a bigger message is replaced by a notice of its size.
        var maximumPayload: Int
        /// Messages in flight at most now: halved when another publisher's messages come in between, doubled
        /// back after each window acknowledged whole.
        var window = PublishService.window
    }

    private func run() {
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
            if ready { publishPending(&state) }
            var descriptor = pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0)
            flushPosition(&state, force: false)
            var timeout = state.failing ? state.backoff : configuration.pollInterval
            if state.unposted != nil { timeout = min(timeout, Self.postInterval) }
            _ = poll(&descriptor, 1, Int32(clamping: timeout / 1_000_000))
            _ = wake.drain()
        }
    }

    /// Opens the database, reads the store's UUID and the position, and finds in the stream what was
    /// acknowledged after it. A publisher without a position resumes after this store's last message in the
    /// stream, or else starts at the last token (changes from now on); its position is recorded at once.
    private func open() throws -> State {
        let engine = try Daemon.openEventEngine(configuration)
        let source = try EventSource(engine: engine)
        let store = try StoreMetadata.read(engine.connection).storeUUID
        let name = Self.consumerName(settings.stream)
        let stored = try ConsumerTable.acked(engine.connection, name: name)
        var state = State(
            engine: engine,
            source: source,
            store: store,
            position: stored ?? 0,
            mark: Mark(token: stored ?? 0, index: nil),
            maximumPayload: stream.maximumPayload
        )
        let found = try lastInStream(store)
        if let found, found > state.mark { state.mark = found }
        if stored == nil {
            let start = try found?.token ?? source.lastToken()
            if found == nil { state.mark = Mark(token: start, index: nil) }
            state.position = start
            consumers.post(name: name, token: start, at: TransactionWriter.now())
            logger.notice(
                "publishing to stream \(settings.stream) from token \(start) on",
                fields: [.consumer: name, .token: "\(start)"]
            )
        }
        return state
    }

    /// Where this store's last message in the stream stands (nil: the stream holds none of its messages):
    /// found by subject, so other stores publishing to the same stream do not hide it.
    private func lastInStream(_ store: String) throws -> Mark? {
        let filter = subjects.filter(store: store)
        guard let message = try stream.lastMessage(settings.stream, subject: filter, headers: ["Nats-Msg-Id"]),
            let id = message.headers["Nats-Msg-Id"]
        else { return nil }
        let parts = id.split(separator: ":").map(String.init)
        guard parts.count >= 2, parts[0] == store, let token = Int64(parts[1]) else { return nil }
        return Mark(token: token, index: parts.count > 2 ? Int(parts[2]) : nil)
    }

    /// Moves the mark past what the stream already holds from this store.
    private func findInStream(_ state: inout State) throws {
        if let found = try lastInStream(state.store), found > state.mark { state.mark = found }
    }

    /// Publishes every transaction after the mark, a page at a time, and posts the position after each page.
    private func publishPending(_ state: inout State) {
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
            }
            while state.mark.token < last || state.mark.index != nil {
                if shared.withLock({ $0.stop || $0.reopen || $0.held }) { return }
                let after = state.mark.index == nil ? state.mark.token : state.mark.token - 1
                try checkNotPruned(after: after, state.source)
                let page = try state.source.transactions(after: after, through: last, limit: 256)
                guard let final = page.last else {
                    // Nothing after the mark up to `last` (pruned: said above): the position moves to it.
                    state.mark = Mark(token: last, index: nil)
                    post(last, &state)
                    break
                }
                var published = 0
                var pending: [Pending] = []
                for transaction in page { pending += try self.pending(transaction, state) }
                published += try send(pending, &state)
                state.mark = Mark(token: final.token, index: nil)
                shared.withLock {
                    $0.published += published
                    $0.position = final.token
                }
                post(final.token, &state)
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

    /// One message to publish and where the stream stands once it is in.
    private struct Pending {
        let mark: Mark
        let outgoing: JetStream.Outgoing
    }

    /// How many messages are in flight at most (sent, their acknowledgements not yet read), and how many
    /// bytes (below the client's 8 MiB buffer).
    static let window = 1_024
    static let windowBytes = 4 << 20

    /// The messages of `transaction` past the mark (none for a mirror unless `mirrors`).
    private func pending(_ transaction: HistoryTransaction, _ state: State) throws -> [Pending] {
        let isMirror = transaction.author == state.engine.configuration.author
        guard !isMirror || settings.mirrors, Mark(token: transaction.token, index: nil) > state.mark else { return [] }
        let events = try state.source.events(transaction, values: settings.values)
        let messages = Self.messages(
            events,
            framing: settings.framing,
            values: settings.values,
            subjects: subjects,
            store: state.store
        )
        var result: [Pending] = []
        for (index, message) in messages.enumerated() {
            let mark = Mark(token: transaction.token, index: settings.framing == .event ? index : nil)
            guard mark > state.mark else { continue }
            var data = message.data
            if data.count > state.maximumPayload - 4_096 {
                // Never publishable as it is: a notice in its place keeps the stream whole (the consumer reads
                // the change from the file or the socket), instead of holding everything after it back.
                logger.error(
                    "the message of token \(transaction.token) has \(data.count) bytes, more than the server "
                        + "takes: published as an \"oversize\" notice",
                    fields: [.token: "\(transaction.token)"]
                )
                data = Array(
                    #"{"type":"oversize","token":\#(transaction.token),"index":\#(index),"bytes":\#(data.count)}"#.utf8
                )
            }
            result.append(
                Pending(
                    mark: mark,
                    outgoing: JetStream.Outgoing(
                        subject: message.subject,
                        data: data,
                        messageID: message.messageID,
                        headers: message.headers
                    )
                )
            )
        }
        return result
    }

    /// Publishes `pending` in order, ``window`` messages in flight at a time; the mark moves with each
    /// acknowledgement. Returns how many were acknowledged; throws at the first message that could not be
    /// (the mark is then on the message before it).
    private func send(_ pending: [Pending], _ state: inout State) throws -> Int {
        var start = 0
        while start < pending.count {
            if shared.withLock({ $0.stop }) { throw Stopping() }
            var end = start
            var bytes = 0
            while end < pending.count, end - start < state.window, end == start || bytes < Self.windowBytes {
                bytes += pending[end].outgoing.data.count
                end += 1
            }
            let window = Array(pending[start..<end])
            let outcomes = try stream.publish(window: window.map(\.outgoing), stream: settings.stream)
            let acknowledged = outcomes.prefix { if case .acknowledged = $0 { true } else { false } }.count
            if acknowledged > 0 { state.mark = window[acknowledged - 1].mark }
            start += acknowledged
            guard acknowledged < window.count else {
                state.window = min(Self.window, state.window * 2)
                continue
            }
            switch outcomes[acknowledged] {
            case .refused(let code, _) where code == JetStream.wrongLastMessageID && acknowledged > 0:
                // Another publisher's message came in between: the rest goes again as a new window, and
                // fewer go at once while that happens (each refusal costs the rest of a window).
                state.window = max(1, state.window / 2)
                continue
            case .refused(let code, let description):
                throw PublishError("publish", message: "refused: \(description)", code: code)
            case .unanswered, .acknowledged:
                throw PublishError(
                    "publish",
                    message: "no acknowledgement within \(stream.timeout) ms",
                    unavailable: true
                )
            }
        }
        return start
    }

    /// The messages of one transaction's events.
    static func messages(
        _ events: [EncodedEvent],
        framing: PublishConfiguration.Framing,
        values: Bool,
        subjects: SubjectTemplate,
        store: String
    ) -> [ChangeMessage] {
        guard let first = events.first else { return [] }
        switch framing {
        case .event:
            return events.enumerated().map { index, event in
                let line = values ? (event.withValues ?? event.plain) : event.plain
                return ChangeMessage(
                    subject: subjects.subject(
                        store: store,
                        entity: event.entity,
                        change: event.change.description,
                        side: event.side.rawValue
                    ),
                    data: line.array,
                    store: store,
                    token: event.token,
                    index: index,
                    entity: event.entity,
                    change: event.change.description,
                    side: event.side.rawValue,
                    author: event.author
                )
            }
        case .transaction:
            guard let line = WireLine(transaction: events, values: values) else { return [] }
            // A value every change shares, else `_`.
            let entity = events.allSatisfy { $0.entity == first.entity } ? first.entity : nil
            let change = events.allSatisfy { $0.change == first.change } ? first.change.description : "_"
            return [
                ChangeMessage(
                    subject: subjects.subject(store: store, entity: entity, change: change, side: first.side.rawValue),
                    data: line.array,
                    store: store,
                    token: first.token,
                    index: nil,
                    entity: entity,
                    change: change,
                    side: first.side.rawValue,
                    author: first.author
                )
            ]
        }
    }

    /// The history after `after` was pruned before it was published — which pruning never does while the
    /// position is held (the publisher's position never expires), unless an operator dropped or moved it.
    /// Said loudly: those changes are not in the stream.
    private func checkNotPruned(after: Int64, _ source: EventSource) throws {
        guard let oldest = try source.oldestToken(), oldest > after + 1 else {
            return
        }
        logger.error(
            "history after token \(after) was pruned before it was published: tokens \(after + 1) to "
                + "\(oldest - 1) are not in stream \(settings.stream)",
            fields: [.consumer: Self.consumerName(settings.stream), .token: "\(after)"]
        )
    }

    /// Records `token` as the position (never backwards).
    private func post(_ token: Int64, _ state: inout State) {
        guard token > state.position else { return }
        state.unposted = token
        shared.withLock { $0.position = token }
        flushPosition(&state, force: false)
    }

    /// How often at most an acknowledged position is posted.
    static let postInterval: UInt64 = 100_000_000

    /// Posts the acknowledged position when one is waiting and the interval has passed (or `force`).
    private func flushPosition(_ state: inout State, force: Bool = true) {
        guard let token = state.unposted else { return }
        let now = Monotonic.now()
        guard force || now >= state.postedAt + Self.postInterval else { return }
        consumers.post(name: Self.consumerName(settings.stream), token: token, at: TransactionWriter.now())
        state.position = token
        state.unposted = nil
        state.postedAt = now
    }

    /// Thrown inside a page when the daemon stops: what was acknowledged is kept in the mark.
    private struct Stopping: Error {}

    private func note(failure error: any Error, _ state: inout State) {
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
