internal import CSystemd

#if canImport(Glibc)
internal import Glibc
#endif

/// An `eventfd(2)` one thread signals and another polls: a wake-up that is never lost (signals before the
/// poll are counted) and costs one `write`.
public final class WakeSignal: Sendable {
    /// The descriptor to poll for readability.
    public let descriptor: Int32

    /// Opens the descriptor (non-blocking, close-on-exec).
    public init() throws(SystemError) {
        let descriptor = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard descriptor >= 0 else { throw SystemError(call: "eventfd", code: errno) }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Wakes the poller.
    public func signal() {
        var one: UInt64 = 1
        while write(descriptor, &one, 8) < 0 && errno == EINTR {}
    }

    /// Consumes the pending signals; true when there was one.
    @discardableResult
    public func drain() -> Bool {
        var count: UInt64 = 0
        return read(descriptor, &count, 8) == 8 && count > 0
    }
}
