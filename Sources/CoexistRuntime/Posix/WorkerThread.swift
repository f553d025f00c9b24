internal import CSystemd

#if canImport(Glibc)
internal import Glibc
#endif

/// A POSIX thread running one closure, named for `top -H` and the journal, joined explicitly.
///
/// Plain `pthread_create`: Foundation's `Thread` would link Foundation (and ICU) into the daemon for this
/// alone.
public final class WorkerThread: Sendable {
    private final class Context: Sendable {
        let name: String
        let body: @Sendable () -> Void
        init(_ name: String, _ body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }

    private let thread: pthread_t

    /// Starts a thread named `name` (at most 15 bytes are kept) that runs `body`.
    public init(name: String, _ body: @escaping @Sendable () -> Void) throws(SystemError) {
        let context = Unmanaged.passRetained(Context(name, body)).toOpaque()
        var thread = pthread_t()
        let code = pthread_create(
            &thread,
            nil,
            { context in
                guard let context else { return nil }
                let work = Unmanaged<Context>.fromOpaque(context).takeRetainedValue()
                _ = coexist_name_thread(String(decoding: work.name.utf8.prefix(15), as: UTF8.self))
                work.body()
                return nil
            },
            context
        )
        guard code == 0 else {
            Unmanaged<Context>.fromOpaque(context).release()
            throw SystemError(call: "pthread_create", code: code, subject: name)
        }
        self.thread = thread
    }

    /// Waits for the thread to return.
    public func join() {
        pthread_join(thread, nil)
    }
}

/// The calling thread's timer slack.
public enum TimerSlack {
    /// Sets it to `nanoseconds` for this thread and the threads it starts afterwards.
    public static func set(nanoseconds: UInt) {
        _ = coexist_set_timer_slack(nanoseconds)
    }
}
