internal import CSystemd

#if canImport(Glibc)
internal import Glibc
#endif

/// An `epoll(7)` set: descriptors registered once, polled through one descriptor, and read back only when
/// ready. Waiting on it costs the same with ten registrations or ten thousand, where `poll` walks (and the
/// kernel hooks and unhooks) every descriptor on every call.
///
/// Level-triggered: a registration is reported on every ``ready(limit:)`` while it stays ready. Each
/// registration carries a key of the caller's choosing: keys already taken in a batch may name a descriptor
/// closed since, whose number a newer one has, so a key should tell them apart. Remove a descriptor before
/// closing it: the kernel drops the registration only when the last reference to the file closes.
public final class ReadinessSet {
    /// The descriptor to poll for readability: readable while any registration is ready.
    public let descriptor: Int32

    /// Opens an empty set (close-on-exec).
    public init() throws(SystemError) {
        let descriptor = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard descriptor >= 0 else { throw SystemError(call: "epoll_create1", code: errno) }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Registers `fd` for `events` (`POLLIN`, `POLLOUT`; errors and hang-ups are always reported).
    public func add(_ fd: Int32, events: Int16, key: UInt64) throws(SystemError) {
        try control(EPOLL_CTL_ADD, fd, events, key)
    }

    /// Changes what a registered `fd` waits for.
    public func modify(_ fd: Int32, events: Int16, key: UInt64) throws(SystemError) {
        try control(EPOLL_CTL_MOD, fd, events, key)
    }

    /// Forgets `fd` (before it is closed).
    public func remove(_ fd: Int32) {
        _ = coexist_epoll_control(descriptor, EPOLL_CTL_DEL, fd, 0, 0)
    }

    /// Up to `limit` (at most 64) ready registrations, without waiting: each key with what it is ready for,
    /// as `poll` spells it (`POLLIN`, `POLLOUT`, `POLLERR`, `POLLHUP`).
    public func ready(limit: Int = 64) -> [(key: UInt64, events: Int16)] {
        let capacity = max(1, min(limit, 64))
        var keys = [UInt64](repeating: 0, count: capacity)
        var events = [UInt32](repeating: 0, count: capacity)
        var count: Int32
        repeat {
            count = coexist_epoll_ready(descriptor, &keys, &events, Int32(capacity))
        } while count < 0 && errno == EINTR
        guard count > 0 else { return [] }
        return (0..<Int(count)).map { (keys[$0], Self.pollEvents(events[$0])) }
    }

    private func control(_ operation: Int32, _ fd: Int32, _ events: Int16, _ key: UInt64) throws(SystemError) {
        guard coexist_epoll_control(descriptor, operation, fd, Self.epollEvents(events), key) == 0 else {
            throw SystemError(call: "epoll_ctl", code: errno)
        }
    }

    private static func epollEvents(_ events: Int16) -> UInt32 {
        (events & Int16(POLLIN) != 0 ? EPOLLIN.rawValue : 0) | (events & Int16(POLLOUT) != 0 ? EPOLLOUT.rawValue : 0)
    }

    private static func pollEvents(_ events: UInt32) -> Int16 {
        var result: Int16 = 0
        if events & EPOLLIN.rawValue != 0 { result |= Int16(POLLIN) }
        if events & EPOLLOUT.rawValue != 0 { result |= Int16(POLLOUT) }
        if events & EPOLLERR.rawValue != 0 { result |= Int16(POLLERR) }
        if events & EPOLLHUP.rawValue != 0 { result |= Int16(POLLHUP) }
        return result
    }
}
