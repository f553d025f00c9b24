import CoexistConfiguration
import CoexistEvents
import CoexistHistory
import CoexistLegacyStore
import CoexistPublish
import CoexistRuntime

/// Where the publisher stands: its durable position (a durable consumer's, posted to the bridge service),
/// and what the stream itself says was acknowledged after it.
extension PublishService {
    /// Opens the database, reads the store's UUID and the position, and finds in the stream what was
    /// acknowledged after it. A publisher without a position resumes after this store's last message in the
    /// stream, or else starts at the last token (changes from now on); its position is recorded at once.
    func open() throws -> State {
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
            maximumPayload: try messageLimit(),
            pipeline: try PublishPipeline(stream, stream: settings.stream)
        )
        let found = try lastInStream(store)
        if let found, found > state.mark { state.mark = found }
        if stored == nil {
            // Every change up to the position is in the stream: when the stream ends inside a transaction (a
            // stop while its messages were in flight), the one before it.
            let start = try found.map { $0.index == nil ? $0.token : $0.token - 1 } ?? source.lastToken()
            if found == nil { state.mark = Mark(token: start, index: nil) }
            state.position = start
            consumers.post(name: name, token: start, at: TransactionWriter.now())
            logger.notice(
                "publishing to stream \(settings.stream) from token \(start) on",
                fields: [.consumer: name, .token: "\(start)"]
            )
        } else {
            postWhole(&state)
        }
        return state
    }

    /// Posts the last transaction the mark covers whole when it is past the position (the stream held more
    /// than the position said, after a stop before the last post): otherwise the position, and the lag, would
    /// wait for the next commit.
    func postWhole(_ state: inout State) {
        post(state.mark.index == nil ? state.mark.token : state.mark.token - 1, &state)
    }

    /// The largest message the connected server and the stream take.
    func messageLimit() throws -> Int {
        min(stream.maximumPayload, try stream.maximumMessageSize(of: settings.stream) ?? Int.max)
    }

    /// Where this store's last message in the stream stands (nil: the stream holds none of its messages):
    /// found by subject, so other stores publishing to the same stream do not hide it.
    func lastInStream(_ store: String) throws -> Mark? {
        let filter = subjects.filter(store: store)
        guard let message = try stream.lastMessage(settings.stream, subject: filter, headers: ["Nats-Msg-Id"]),
            let id = message.headers["Nats-Msg-Id"]
        else { return nil }
        let parts = id.split(separator: ":").map(String.init)
        guard parts.count >= 2, parts[0] == store, let token = Int64(parts[1]) else { return nil }
        return Mark(token: token, index: parts.count > 2 ? Int(parts[2]) : nil)
    }

    /// Moves the mark past what the stream already holds from this store.
    func findInStream(_ state: inout State) throws {
        if let found = try lastInStream(state.store), found > state.mark {
            state.mark = found
            postWhole(&state)
        }
    }

    /// The history after `after` was pruned before it was published — which pruning never does while the
    /// position is held (the publisher's position never expires), unless an operator dropped or moved it.
    /// Said loudly: those changes are not in the stream.
    func checkNotPruned(after: Int64, _ source: EventSource) throws {
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
    func post(_ token: Int64, _ state: inout State) {
        guard token > state.position else { return }
        state.unposted = token
        shared.withLock { $0.position = token }
        flushPosition(&state, force: false)
    }

    /// How often at most an acknowledged position is posted.
    static let postInterval: UInt64 = 100_000_000

    /// Posts the acknowledged position when one is waiting and the interval has passed (or `force`).
    func flushPosition(_ state: inout State, force: Bool = true) {
        guard let token = state.unposted else { return }
        let now = Monotonic.now()
        guard force || now >= state.postedAt + Self.postInterval else { return }
        consumers.post(name: Self.consumerName(settings.stream), token: token, at: TransactionWriter.now())
        state.position = token
        state.unposted = nil
        state.postedAt = now
    }
}
