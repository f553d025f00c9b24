import CoexistRuntime

#if canImport(Glibc)
import Glibc
#endif

/// How a service's thread is started: the daemon goes on only once the thread has opened what it needs
/// (its connection, its position), or has failed to.
enum ServiceThread {
    /// Starts `body` on a thread named `name`, then waits, woken by `signal` (and every 100 ms), until
    /// `state` says the thread started (the thread is returned) or failed (it is joined and the failure
    /// thrown).
    static func start(
        name: String,
        signal: WakeSignal,
        state: () -> (started: Bool, failure: (any Error)?),
        _ body: @escaping @Sendable () -> Void
    ) throws -> WorkerThread {
        let thread = try WorkerThread(name: name, body)
        while true {
            var descriptor = pollfd(fd: signal.descriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, 100)
            let (started, failure) = state()
            if let failure {
                thread.join()
                throw failure
            }
            if started { return thread }
        }
    }
}
