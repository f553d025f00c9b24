import CoexistBridge
import CoexistConfiguration
import CoexistEvents
import CoexistProtocol
import CoexistRuntime

/// The daemon's `STATUS=` line, its rate, and SIGHUP.
extension Daemon {
    func statusLine() -> String {
        let cursor = ((try? engine?.cursor()) ?? nil) ?? 0
        let last = (try? engine?.lastToken()) ?? 0
        let shared = worker?.shared.withLock { $0 } ?? BridgeWorker.Shared()
        return "cursor \(cursor), lag \(max(0, last - cursor)), \((rate * 10).rounded() / 10) tx/s, "
            + "\(shared.mirrored) mirrored, \(shared.conflicts) conflicts, "
            + "\(((try? engine?.parkedCount()) ?? nil) ?? shared.parked) parked"
            + (((try? engine?.oldestParked()) ?? nil).map { " (oldest: \($0.prefix(120)))" } ?? "")
            + (shared.lastError.map { ", retrying: \($0)" } ?? "")
            + (publisher.map { publisher in
                let state = publisher.shared.withLock { $0 }
                return ", publish lag \(max(0, state.last - state.position))"
                    + (state.lastError.map { " (retrying: \($0.prefix(120)))" } ?? "")
            } ?? "")
    }

    func updateStatus(_ now: UInt64) {
        refreshRate(now)
        let changed = worker?.shared.withLock { shared in
            defer { shared.changed = false }
            return shared.changed
        }
        let publishing = publisher.map { $0.lag > 0 || $0.shared.withLock { $0.lastError != nil } } ?? false
        guard notifier.isEnabled, changed == true || rate > 0 || publishing else { return }
        notifier.status(statusLine())
    }

    /// The mirroring rate since the last refresh (at most once a second).
    func refreshRate(_ now: UInt64) {
        guard now >= statusAt + 1_000_000_000 else { return }
        let elapsed = Double(now - statusAt) / 1e9
        let handled = worker?.shared.withLock { shared in
            defer { shared.handledSinceStatus = 0 }
            return shared.handledSinceStatus
        }
        rate = Double(handled ?? 0) / elapsed
        statusAt = now
    }

    /// SIGHUP: re-reads the configuration; applies what can change at run time, names what needs a restart.
    func reload() {
        notifier.reloading()
        do {
            let fresh = try DaemonConfiguration.load(file: configFile, commandLine: commandLine)
            let (reloadable, restart) = fresh.changes(from: configuration)
            configuration.adoptReloadable(from: fresh)
            server?.limits = configuration.limits
            logger.level = fresh.logLevel
            engine?.configuration = configuration.bridge
            worker?.update(settings)
            let fields: [LogField: String] = [.event: "reloaded"]
            if !reloadable.isEmpty {
                logger.notice("reloaded: \(reloadable.joined(separator: ", "))", fields: fields)
            }
            if !restart.isEmpty {
                logger.warning("these changes need a restart: \(restart.joined(separator: ", "))", fields: fields)
            }
            if reloadable.isEmpty && restart.isEmpty { logger.notice("reloaded: nothing changed", fields: fields) }
        } catch {
            logger.error(
                "reload failed, keeping the running configuration: \(error)",
                fields: [.event: "reload-failed"]
            )
        }
        notifier.ready(status: statusLine())
    }
}

extension Daemon {
    /// The publisher's fields of a `status` reply (none when publishing is off): the last token the servers
    /// acknowledged, the lag behind the file's last token, messages acknowledged, and the last failure.
    func publishStatusFields() -> [(String, JSONField)] {
        guard let publisher else { return [] }
        let state = publisher.shared.withLock { $0 }
        return [
            ("publishPosition", .integer(state.position)),
            ("publishLag", .integer(max(0, state.last - state.position))),
            ("publishedMessages", .integer(Int64(state.published))),
            ("publishError", state.lastError.map { .string($0) } ?? .null),
        ]
    }
}

extension Daemon {
    /// The file holds the position of a publisher that is no longer configured (publishing off, or another
    /// stream): it holds history back from pruning (it never expires), so the operator is told how to let
    /// it go.
    func warnAboutFormerPublishers() {
        guard let connection, let names = try? ConsumerTable.list(connection).map(\.name) else { return }
        let current = configuration.publish.isEnabled ? PublishService.consumerName(configuration.publish.stream) : nil
        for name in names where name.hasPrefix(ConsumerTable.reservedPrefix + "publish:") && name != current {
            logger.warning(
                "the position of a former JetStream publisher (\(name)) holds history back from pruning; "
                    + "drop it with coexistctl consumers drop \(configuration.database) \(name)",
                fields: [.consumer: name]
            )
        }
    }
}
