import CoexistBridge
import CoexistRuntime

/// What the daemon's thread does when a commit may have landed: the event service publishes it, then the
/// bridge thread and the publisher are told.
extension Daemon {
    /// Checks for a commit (`fileEvent`: the commit watcher saw the WAL written), publishes what is not
    /// published yet and wakes the bridge thread and, when the event service could not hand it over, the
    /// publisher. Returns false when publishing failed (tried again at the next check).
    func publishCommits(watcher: CommitWatcher, worker: BridgeWorker, fileEvent: Bool) -> Bool {
        // While the bridge thread is in a pass no other commit can land, and the WAL writes are its own: it
        // signals when it commits. Otherwise an app's commit may still be becoming visible.
        let landed = watcher.commitLanded(waitForCommit: fileEvent && !worker.inPass.load(ordering: .acquiring))
        if landed { unpublished = true }
        // The bridge thread is woken once the subscribers have the first commit published that is not its
        // own: woken first, it was often run at once on this thread's processor (where its wake-up is placed),
        // holding the events back for its whole pass while the other processor idled. Not after the last: a
        // burst of commits would hold the mirror back for all of them.
        var bridgeWoken = false
        func wakeBridge() {
            guard landed, !bridgeWoken else { return }
            bridgeWoken = true
            worker.commitLanded()
        }
        let published = publishIfUnpublished(firstHandled: wakeBridge)
        wakeBridge()
        // The publisher is handed what the event service reads (its feed); what the event service could not
        // read, the publisher reads from the history itself.
        if !published || server == nil { publisher?.commitLanded() }
        return published
    }

    /// Publishes what was committed since the last time, when the commit watcher saw a commit (by the
    /// bridge thread or another process) not published yet. A failure is retried at the next wake-up.
    /// `firstHandled` is called once the first of those commits that is not the bridge's own is published.
    /// Returns false when publishing failed.
    @discardableResult
    func publishIfUnpublished(firstHandled: () -> Void = {}) -> Bool {
        guard unpublished else { return true }
        do {
            try server?.publish(now: Monotonic.now(), firstHandled: firstHandled)
            unpublished = false
            publishWarning.recovered("publishing events works again", logger: logger)
            return true
        } catch {
            if SyncEngine.isCorruption(error) { publishFailure = error }
            publishWarning.occurred("publishing events failed: \(error)", logger: logger, now: Monotonic.now())
            return false
        }
    }
}
