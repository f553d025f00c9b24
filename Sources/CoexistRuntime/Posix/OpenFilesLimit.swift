#if canImport(Glibc)
internal import Glibc
#endif

/// The process's limit on open descriptors (`RLIMIT_NOFILE`).
///
/// systemd starts services with a soft limit of 1,024 and a much higher hard one, and expects a program that
/// needs more (and never uses `select(2)`) to raise the soft limit itself.
public enum OpenFilesLimit {
    /// Raises the soft limit to the hard one; returns the soft limit now in force (nil when unknown).
    @discardableResult
    public static func raise() -> UInt64? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { return UInt64(raised.rlim_cur) }
        }
        return UInt64(limit.rlim_cur)
    }
}

extension OpenFilesLimit {
    /// Descriptors this process may still open: the soft limit less those open now (counted in
    /// `/proc/self/fd`); nil when either is unknown.
    public static func headroom() -> Int? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        guard let directory = opendir("/proc/self/fd") else { return nil }
        defer { closedir(directory) }
        var open = 0
        while let entry = readdir(directory) {
            if entry.pointee.d_name.0 != UInt8(ascii: ".") { open += 1 }
        }
        // The directory's own descriptor is among those counted and closes right after.
        return Int(clamping: limit.rlim_cur) - (open - 1)
    }
}
