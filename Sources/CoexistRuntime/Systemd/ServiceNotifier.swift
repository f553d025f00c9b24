internal import CSystemd

#if canImport(Glibc)
internal import Glibc
#endif

/// The service manager's notification protocol (`sd_notify(3)`): READY, STATUS, WATCHDOG, RELOADING,
/// STOPPING. Without `NOTIFY_SOCKET` every call does nothing.
public struct ServiceNotifier: Sendable {
    /// Whether a service manager listens (`NOTIFY_SOCKET` is set).
    public let isEnabled: Bool

    /// Creates a notifier.
    public init() { isEnabled = getenv("NOTIFY_SOCKET") != nil }

    /// Sends `state` (newline-separated `KEY=value` assignments).
    public func notify(_ state: String) {
        _ = sd_notify(0, state)
    }

    /// READY=1 with a status line.
    public func ready(status: String) { notify("READY=1\nSTATUS=\(status)") }

    /// STATUS=…
    public func status(_ text: String) { notify("STATUS=\(text)") }

    /// WATCHDOG=1.
    public func watchdog() { notify("WATCHDOG=1") }

    /// RELOADING=1 with the monotonic time newer systemd versions expect.
    public func reloading() {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        notify("RELOADING=1\nMONOTONIC_USEC=\(Int(now.tv_sec) * 1_000_000 + Int(now.tv_nsec) / 1_000)")
    }

    /// STOPPING=1 with a status line.
    public func stopping(status: String) { notify("STOPPING=1\nSTATUS=\(status)") }

    /// The watchdog interval in microseconds when the service manager asked for one (`WATCHDOG_USEC`).
    public func watchdogMicroseconds() -> UInt64? {
        var usec: UInt64 = 0
        return sd_watchdog_enabled(0, &usec) > 0 && usec > 0 ? usec : nil
    }

    /// File descriptors passed by socket activation (`LISTEN_FDS`), starting at 3.
    /// Reads and removes `LISTEN_FDS` from the environment (so that children do not inherit it): ask once.
    public func listenDescriptors() -> [Int32] {
        let count = sd_listen_fds(1)
        guard count > 0 else { return [] }
        return (0..<count).map { 3 + $0 }
    }
}
