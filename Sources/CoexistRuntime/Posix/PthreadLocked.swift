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
        pthread_mutex_init(mutex, nil)
        self.value = value
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the value, under the mutex.
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}

extension PthreadLocked: @unchecked Sendable where Value: Sendable {}
