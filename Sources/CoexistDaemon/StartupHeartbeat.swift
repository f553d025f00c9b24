import CoexistRuntime
import Dispatch
import Foundation

/// Keeps systemd's start timeout at bay while one long start-up operation runs (an auto-migration, whose
/// single phase — a `VACUUM INTO` backup, one step's rebuild — may outlast any fixed extension): every
/// `interval` it sends `EXTEND_TIMEOUT_USEC` (three intervals) with `STATUS=` naming the operation's last
/// phase and how long it has run. It ends with the operation; a process that hangs stops extending only
/// when it dies, which `Restart=` then handles.
final class StartupHeartbeat: @unchecked Sendable {
    private let notifier: ServiceNotifier
    private let interval: TimeInterval
    private let stopped = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    /// Guards `phase` (an `NSLock`: a pthread mutex, which ThreadSanitizer follows).
    private let lock = NSLock()
    private var phase: String

    /// Starts beating for an operation whose first phase is `phase` (nothing when no service manager listens).
    init(notifier: ServiceNotifier, phase: String, interval: TimeInterval = 10) {
        self.notifier = notifier
        self.interval = interval
        self.phase = phase
        guard notifier.isEnabled else {
            done.signal()
            return
        }
        let started = Date()
        Thread.detachNewThread { [self] in
            beat(since: started)
            while stopped.wait(timeout: .now() + interval) == .timedOut { beat(since: started) }
            done.signal()
        }
    }

    /// The operation's current phase: told to systemd at once, and at every beat after.
    func enter(_ text: String) {
        lock.lock()
        phase = text
        lock.unlock()
        guard notifier.isEnabled else { return }
        notifier.notify("STATUS=\(text)\nEXTEND_TIMEOUT_USEC=\(extensionMicroseconds)")
    }

    /// Ends the beats (waits for the beating thread to finish its last one).
    func stop() {
        stopped.signal()
        done.wait()
    }

    private var extensionMicroseconds: UInt64 { UInt64(interval * 3 * 1_000_000) }

    private func beat(since started: Date) {
        lock.lock()
        let text = phase
        lock.unlock()
        let seconds = Int(Date().timeIntervalSince(started))
        notifier.notify("STATUS=\(text) (\(seconds) s)\nEXTEND_TIMEOUT_USEC=\(extensionMicroseconds)")
    }
}
