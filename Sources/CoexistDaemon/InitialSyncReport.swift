import CoexistBridge
import CoexistRuntime

/// How the initial sync's progress is told: `STATUS=` with `EXTEND_TIMEOUT_USEC` (so that a large store
/// never hits systemd's start timeout while it makes progress) at most every second, a log line at info
/// level at the first chunk (the operator sees the sync start and its size) then every 5 seconds, and a
/// notice when it ends.
struct InitialSyncReport {
    let notifier: ServiceNotifier
    let logger: Logger
    let startedAt = Monotonic.now()
    private var statusAt: UInt64 = 0
    private var loggedAt: UInt64?
    private var last: SyncEngine.InitialSyncProgress?
    /// The first progress of this run: a resumed sync's ETA counts only what this run does.
    private var first: (at: UInt64, done: Int)?

    /// How long systemd is asked to wait for the next message: far longer than one chunk takes. (Only
    /// while the sync makes progress: a SIGTERM stops it after the running chunk, before any more.)
    static let extension_: UInt64 = 60_000_000

    /// A progress bar on a terminal (coexistd --once run by hand); nil under systemd.
    private let bar: ProgressLine?

    init(notifier: ServiceNotifier, logger: Logger) {
        self.notifier = notifier
        self.logger = logger
        bar = notifier.isEnabled ? nil : ProgressLine()
    }

    /// One chunk was copied.
    mutating func progressed(_ progress: SyncEngine.InitialSyncProgress) {
        last = progress
        bar?.update("initial sync " + progress.summary, fraction: progress.fraction)
        let now = Monotonic.now()
        let first = self.first ?? (now, progress.overallDone)
        self.first = first
        if now >= statusAt + 1_000_000_000 {
            statusAt = now
            let text = Self.describe(progress, since: first, now: now)
            notifier.notify("STATUS=\(text)\nEXTEND_TIMEOUT_USEC=\(Self.extension_)")
        }
        // On a terminal the bar shows the progress: a log line every 5 s would break it.
        if bar == nil || bar?.isDrawing == false, loggedAt.map({ now >= $0 + 5_000_000_000 }) ?? true {
            loggedAt = now
            logger.info(Self.describe(progress, since: first, now: now), fields: [.event: "initial-sync"])
        }
    }

    /// Erases the progress bar (the sync ended, stopped or failed).
    func finish() { bar?.finish() }

    /// The sync ended.
    func finished() {
        bar?.finish()
        let seconds = Double((Monotonic.now() - startedAt) / 1_000_000) / 1_000
        let objects = (last?.overallTotal ?? 0) / 2
        logger.notice(
            "initial sync done: \(objects) objects \(last?.direction ?? "") in \(seconds) s",
            fields: [.event: "initial-sync"]
        )
    }

    /// `initial sync legacy-to-new: 25% (objects of Task: 1500 of 3000), about 12 s left`.
    static func describe(
        _ progress: SyncEngine.InitialSyncProgress,
        since first: (at: UInt64, done: Int),
        now: UInt64
    ) -> String {
        var text = "initial sync " + progress.summary
        let eta = StartupResponder.eta(
            done: progress.overallDone - first.done,
            left: progress.overallTotal - progress.overallDone,
            elapsed: now - first.at
        )
        if let eta {
            text += ", about \(Int(eta.rounded())) s left"
        }
        return text
    }
}
