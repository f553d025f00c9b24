#if canImport(Glibc)
internal import Glibc
#endif

/// `CLOCK_MONOTONIC`, the clock every deadline and interval of the daemon is measured on.
public enum Monotonic {
    /// Now, in nanoseconds.
    public static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
