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

    /// Sends `state` (newline-separated `KEY=value` assignments) without ever blocking the caller for
    /// long: `sd_notify(3)` sends on a blocking socket, and a service manager (or a test) that does not read
    /// its queue (a dozen datagrams) would stop the daemon's event loop. A `READY=1` or `STOPPING=1` waits
    /// up to a second for room; anything else (a `STATUS=`, a watchdog ping) is dropped when the queue is
    /// full — the next one says it again.
    public func notify(_ state: String) {
        guard isEnabled, let path = getenv("NOTIFY_SOCKET").map({ String(cString: $0) }), !path.isEmpty else {
            return
        }
        let lines = state.split(separator: "\n")
        let essential = lines.contains("READY=1") || lines.contains("STOPPING=1")
        _ = Self.send(Array(state.utf8), to: path, patience: essential ? 1_000_000_000 : 0)
    }

    /// Sends `message` as one datagram to the socket at `path` (`@name`: the abstract namespace), waiting
    /// up to `patience` nanoseconds while its queue is full; false when it was not sent.
    public static func send(_ message: [UInt8], to path: String, patience: UInt64) -> Bool {
        let type = Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let descriptor = socket(AF_UNIX, type, 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var name = Array(path.utf8)
        let abstract = name.first == UInt8(ascii: "@")
        if abstract { name[0] = 0 }
        guard name.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: name) }
        // An abstract name is its bytes exactly; a path is terminated by the NUL that follows it.
        let length = socklen_t(MemoryLayout<sa_family_t>.size + name.count + (abstract ? 0 : 1))
        let deadline = Monotonic.now() + patience
        while true {
            let sent = message.withUnsafeBytes { data in
                withUnsafePointer(to: &address) { pointer in
                    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(descriptor, data.baseAddress, data.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT), $0, length)
                    }
                }
            }
            let code = errno
            if sent >= 0 { return true }
            if code == EINTR { continue }
            guard code == EAGAIN || code == EWOULDBLOCK, Monotonic.now() < deadline else { return false }
            usleep(10_000)
        }
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
