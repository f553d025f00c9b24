internal import CSystemd

#if canImport(Glibc)
internal import Glibc
#endif

/// A listening Unix stream socket: bound by the daemon (mode and group set, a stale socket file replaced)
/// or passed by systemd's socket activation.
public final class UnixListener {
    /// The listening descriptor (non-blocking, close-on-exec).
    public let descriptor: Int32
    /// The socket path (for removal on exit); nil when the socket was passed by the service manager.
    public let ownedPath: String?

    /// The longest socket path the kernel accepts (`sun_path` is 108 bytes with its terminator).
    public static let maximumPathLength = 107

    /// Adopts a descriptor passed by socket activation after checking it is a listening Unix stream socket.
    public init(inherited descriptor: Int32) throws(SystemError) {
        guard sd_is_socket_unix(descriptor, Int32(SOCK_STREAM.rawValue), 1, nil, 0) > 0 else {
            throw SystemError(call: "sd_is_socket_unix", code: EINVAL, subject: "inherited descriptor \(descriptor)")
        }
        let flags = fcntl(descriptor, F_GETFL)
        _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK)
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        self.descriptor = descriptor
        ownedPath = nil
    }

    /// Whether `descriptor` is a Unix stream socket listening on `path` (for one passed by socket activation:
    /// the unit's `ListenStream=`).
    public static func listens(_ descriptor: Int32, on path: String) -> Bool {
        sd_is_socket_unix(descriptor, Int32(SOCK_STREAM.rawValue), 1, path, 0) > 0
    }

    /// Binds `path` with `mode` (and `group`, when given). A socket file left by a daemon that is gone is
    /// replaced; a socket another process still listens on is an error (EADDRINUSE), and so is any file at
    /// the path that is not a socket (EEXIST): it is never removed.
    public init(path: String, mode: UInt32, group: UInt32? = nil, backlog: Int32 = 128) throws(SystemError) {
        guard path.utf8.count <= Self.maximumPathLength else {
            throw SystemError(call: "bind", code: ENAMETOOLONG, subject: path)
        }
        let descriptor = socket(
            AF_UNIX,
            Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
            0
        )
        guard descriptor >= 0 else { throw SystemError(call: "socket", code: errno, subject: path) }
        var address = Self.address(path)
        let length = socklen_t(MemoryLayout<sockaddr_un>.size)
        func bindSocket() -> Int32 {
            withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
            }
        }
        if bindSocket() != 0 {
            let code = errno
            guard code == EADDRINUSE else {
                close(descriptor)
                throw SystemError(call: "bind", code: code, subject: path)
            }
            // Only a socket file nobody listens on is replaced: any other file at the path (the database
            // itself, say) is someone's data, and a live socket is another server's.
            var info = stat()
            guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFSOCK else {
                close(descriptor)
                throw SystemError(
                    call: "bind",
                    code: EEXIST,
                    subject: path,
                    detail: "the path exists and is not a socket"
                )
            }
            guard !Self.someoneListens(path) else {
                close(descriptor)
                throw SystemError(
                    call: "bind",
                    code: EADDRINUSE,
                    subject: path,
                    detail: "another process listens on it (or it cannot be probed)"
                )
            }
            unlink(path)
            guard bindSocket() == 0 else {
                let code = errno
                close(descriptor)
                throw SystemError(call: "bind", code: code, subject: path)
            }
        }
        guard chmod(path, mode_t(mode)) == 0, group.map({ chown(path, uid_t.max, gid_t($0)) == 0 }) ?? true,
            listen(descriptor, backlog) == 0
        else {
            let code = errno
            close(descriptor)
            unlink(path)
            throw SystemError(call: "listen", code: code, subject: path)
        }
        self.descriptor = descriptor
        ownedPath = path
    }

    deinit {
        close(descriptor)
        if let ownedPath { unlink(ownedPath) }
    }

    /// Accepts one pending connection (non-blocking); nil when none is waiting (or the one waiting went
    /// away). Throws when the process cannot take it: out of descriptors (`EMFILE`, `ENFILE`) or memory;
    /// the connection then stays pending, so the caller should stop polling the listener for a while.
    public func accept() throws(SystemError) -> Int32? {
        while true {
            let client = coexist_accept(descriptor)
            if client >= 0 { return client }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK, ECONNABORTED, EPROTO: return nil
            default: throw SystemError(call: "accept4", code: errno)
            }
        }
    }

    static func address(_ path: String) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.prefix(maximumPathLength).enumerated() { raw[index] = byte }
        }
        return address
    }

    /// Whether a process may accept connections on `path`: only a refused connection (`ECONNREFUSED`: a
    /// socket file nobody listens on) says no. The probe does not block: a listener whose backlog is full
    /// answers `EAGAIN`, and one the probe may not reach (`EACCES`) is not taken for stale and replaced.
    static func someoneListens(_ path: String) -> Bool {
        let probe = socket(
            AF_UNIX,
            Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue),
            0
        )
        guard probe >= 0 else { return true }
        defer { close(probe) }
        var address = address(path)
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(probe, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        return result == 0 || (errno != ECONNREFUSED && errno != ENOENT)
    }
}

/// The credentials of a connected Unix-socket peer (`SO_PEERCRED`).
public struct PeerCredentials: Sendable, Equatable {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32

    /// The credentials of the peer of `descriptor`, nil when the kernel does not tell.
    public init?(descriptor: Int32) {
        var credentials = coexist_peer_credentials()
        guard coexist_peer_credentials(descriptor, &credentials) == 0 else { return nil }
        pid = credentials.pid
        uid = credentials.uid
        gid = credentials.gid
    }
}
