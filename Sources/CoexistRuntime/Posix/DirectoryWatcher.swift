internal import CSystemd

#if canImport(Glibc)
internal import Glibc
#endif

/// Watches a directory with inotify for writes to some of its files (a database's `-wal`).
///
/// The directory is watched rather than the file because SQLite creates and removes `-wal` files; events
/// for other names are ignored. Poll ``descriptor``; call ``drain()`` when it is readable, from one thread
/// at a time (it reads into a buffer of its own).
public final class DirectoryWatcher {
    /// The descriptor to poll for readability.
    public let descriptor: Int32
    private let names: Set<String>
    /// Where ``drain()`` reads events: made once, not at every wake-up.
    private var buffer = [UInt8](repeating: 0, count: 16_384)

    /// Watches `directory` for modifications of the files called `names`.
    public init(directory: String, names: Set<String>) throws(SystemError) {
        let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { throw SystemError(call: "inotify_init1", code: errno) }
        let mask = UInt32(IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE)
        guard inotify_add_watch(descriptor, directory, mask) >= 0 else {
            let code = errno
            close(descriptor)
            throw SystemError(call: "inotify_add_watch", code: code, subject: directory)
        }
        self.descriptor = descriptor
        self.names = names
    }

    deinit { close(descriptor) }

    /// Reads every pending event; true when one concerned a watched name.
    public func drain() -> Bool {
        var relevant = false
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count <= 0 { return relevant }
            var offset = 0
            let header = MemoryLayout<inotify_event>.size
            while offset + header <= count {
                let length = buffer.withUnsafeBytes { raw in
                    Int(raw.loadUnaligned(fromByteOffset: offset + header - MemoryLayout<UInt32>.size, as: UInt32.self))
                }
                let nameStart = offset + header
                let nameEnd = min(count, nameStart + length)
                let name = String(decoding: buffer[nameStart..<nameEnd].prefix { $0 != 0 }, as: UTF8.self)
                if names.contains(name) { relevant = true }
                offset = nameStart + length
            }
        }
    }
}
