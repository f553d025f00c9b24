internal import CSQLite

#if canImport(Glibc)
internal import Glibc
#endif

/// State for the busy handler of one connection: the deadline of the lock wait in progress.
///
/// SQLite calls the handler with a count of prior calls for the same lock wait; count 0 starts a new wait.
/// The handler sleeps with exponential backoff (50 µs doubling up to 20 ms, with jitter) until the total
/// wait exceeds the timeout, then returns 0 so that the statement fails with `SQLITE_BUSY`.
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

    /// Returns whether SQLite should retry; sleeps first when it should.
    func shouldRetry(count: Int32) -> Bool {
        let now = Self.monotonicNanoseconds()
        if count == 0 { waitStartedAt = now }
        let waited = now &- waitStartedAt
        if waited >= timeoutNanoseconds { return false }
        let base = UInt64(50_000) << UInt64(min(count, 9))
        let capped = min(base, 20_000_000, timeoutNanoseconds - waited)
        let jitter = UInt64.random(in: 0...(capped / 4 + 1))
        let sleepFor = capped - capped / 8 + jitter
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
