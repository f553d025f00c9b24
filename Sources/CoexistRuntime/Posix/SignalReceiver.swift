internal import CSystemd

#if canImport(Glibc)
internal import Glibc
#endif

/// Delivers SIGTERM, SIGINT and SIGHUP through a `signalfd(2)` the event loop polls: signals are never
/// handled inside a C signal handler. SIGPIPE is ignored (a peer closing its socket is an ordinary error).
///
/// Create it on the main thread before starting any other thread, so that every thread blocks the signals.
public final class SignalReceiver {
    /// The signals received.
    public enum Signal: Sendable, Equatable {
        case terminate, interrupt, hangup
    }

    /// The descriptor to poll for readability.
    public let descriptor: Int32

    /// Blocks the signals and opens the descriptor.
    public init() throws(SystemError) {
        var mask = sigset_t()
        sigemptyset(&mask)
        for signal in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&mask, signal) }
        guard pthread_sigmask(SIG_BLOCK, &mask, nil) == 0 else {
            throw SystemError(call: "pthread_sigmask", code: errno)
        }
        signal(SIGPIPE, SIG_IGN)
        let descriptor = signalfd(-1, &mask, Int32(SFD_NONBLOCK | SFD_CLOEXEC))
        guard descriptor >= 0 else { throw SystemError(call: "signalfd", code: errno) }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// The signals waiting, in arrival order.
    public func drain() -> [Signal] {
        var signals: [Signal] = []
        var info = signalfd_siginfo()
        while read(descriptor, &info, MemoryLayout<signalfd_siginfo>.size) == MemoryLayout<signalfd_siginfo>.size {
            switch Int32(info.ssi_signo) {
            case SIGTERM: signals.append(.terminate)
            case SIGINT: signals.append(.interrupt)
            case SIGHUP: signals.append(.hangup)
            default: continue
            }
        }
        return signals
    }
}
