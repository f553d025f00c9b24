internal import CSQLite

#if canImport(Glibc)
internal import Glibc
#endif

/// State for the busy handler of one connection: the deadline of the lock wait in progress.
///
/// SQLite calls the handler with a count of prior calls for the same lock wait; count 0 starts a new wait.
/// The handler sleeps with exponential backoff (50 µs doubling up to ``longestSleep``, with jitter) until the
/// total wait reaches the timeout, then returns 0 so that the statement fails with `SQLITE_BUSY`.
/// See https://www.sqlite.org/c3ref/busy_handler.html.
final class BusyHandlerState {
    var timeoutNanoseconds: UInt64
    var waitStartedAt: UInt64 = 0

    init(timeoutMilliseconds: Int) {
        timeoutNanoseconds = UInt64(max(0, timeoutMilliseconds)) * 1_000_000
    }

    static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// The longest sleep between two tries (ns). Locks on these files are held for a transaction, mostly a
    /// millisecond or less, and a restarting checkpoint holds the write lock up to 5 ms; a waiter tries again
    /// about this long (at most 9/8 of it) after the lock is free. With sleeps doubling to 20 ms, a writer
    /// behind a 5 ms hold woke after 6.4 ms, and after 12.8 ms behind a 7 ms one: such stalls made a writer
    /// at 1,000 commits/s commit in bursts.
    static let longestSleep: UInt64 = 1_000_000

    /// How long to sleep before try `count + 1` of a wait that has lasted `waited` ns: 50 µs doubling up to
    /// ``longestSleep``, between 7/8 and 9/8 of that (jitter, so that waiters spread), never much past the
    /// timeout (at most 1 ns once it is reached).
    func sleep(count: Int32, waited: UInt64) -> UInt64 {
        // At most 50 µs << 9 (25.6 ms, above ``longestSleep``): a shift by 64 or more would give 0, a spin.
        let base = UInt64(50_000) << UInt64(min(max(count, 0), 9))
        let left = timeoutNanoseconds > waited ? timeoutNanoseconds - waited : 0
        let capped = min(base, Self.longestSleep, left)
        let jitter = UInt64.random(in: 0...(capped / 4 + 1))
        return capped - capped / 8 + jitter
    }

    /// Returns whether SQLite should retry; sleeps first when it should.
    func shouldRetry(count: Int32) -> Bool {
        let now = Self.monotonicNanoseconds()
        if count == 0 { waitStartedAt = now }
        let waited = now &- waitStartedAt
        if waited >= timeoutNanoseconds { return false }
        let sleepFor = sleep(count: count, waited: waited)
        var request = timespec(tv_sec: Int(sleepFor / 1_000_000_000), tv_nsec: Int(sleepFor % 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
        return true
    }
}

/// The C entry point SQLite calls; `context` is an unretained `BusyHandlerState`.
let busyHandlerCallback: @convention(c) (UnsafeMutableRawPointer?, Int32) -> Int32 = { context, count in
    guard let context else { return 0 }
    let state = Unmanaged<BusyHandlerState>.fromOpaque(context).takeUnretainedValue()
    return state.shouldRetry(count: count) ? 1 : 0
}
