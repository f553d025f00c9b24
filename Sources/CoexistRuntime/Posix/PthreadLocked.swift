#if canImport(Glibc)
import Glibc
#endif

/// A value guarded by a pthread mutex, for state that threads hand each other where ThreadSanitizer must
/// follow the lock: `Synchronization.Mutex` waits on a futex, and a contended lock is then taken in the
/// kernel, out of ThreadSanitizer's sight (it reports a race that is not one).
public final class PthreadLocked<Value> {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    /// Guards `value`.
    public init(_ value: Value) {
        mutex = .allocate(capacity: 1)
        // Error-checking: taking the lock again on the thread holding it fails (stopped below) instead of
        // hanging, as `Synchronization.Mutex` stops.
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        self.value = value
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the value, under the mutex.
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        // Fails only when this thread holds the lock already: a deadlock stopped where it would start.
        precondition(pthread_mutex_lock(mutex) == 0, "PthreadLocked taken again by the thread holding it")
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}

extension PthreadLocked: @unchecked Sendable where Value: Sendable {}
