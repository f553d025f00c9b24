internal import CSystemd

#if canImport(Glibc)
internal import Glibc
#endif

/// Watches some files of a directory with inotify for writes (a database's `-wal`).
///
/// Each file is watched itself, so that writes to the directory's other files (the database file a
/// checkpoint writes, hundreds of pages at a time; logs) wake no one; the directory is watched only for
/// files of those names appearing (SQLite creates and removes `-wal` files), whose new inode is then
/// watched in turn. Poll ``descriptor``; call ``drain()`` when it is readable, from one thread at a time
/// (it reads into a buffer of its own).
public final class DirectoryWatcher {
    /// The descriptor to poll for readability.
    public let descriptor: Int32
    private let directory: String
    private let names: Set<String>
    /// The directory's watch (files appearing).
    private let directoryWatch: Int32
    /// The files' watches, by watch descriptor.
    private var fileWatches: [Int32: String] = [:]
    /// Where ``drain()`` reads events: made once, not at every wake-up.
    private var buffer = [UInt8](repeating: 0, count: 16_384)

    /// Watches the files called `names` in `directory` for modifications, and for appearing.
    public init(directory: String, names: Set<String>) throws(SystemError) {
        let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { throw SystemError(call: "inotify_init1", code: errno) }
        // The directory first: a file created after this is seen, one created before is watched below.
        let watch = inotify_add_watch(descriptor, directory, UInt32(IN_CREATE | IN_MOVED_TO))
        guard watch >= 0 else {
            let code = errno
            close(descriptor)
            throw SystemError(call: "inotify_add_watch", code: code, subject: directory)
        }
        self.descriptor = descriptor
        self.directory = directory
        self.names = names
        directoryWatch = watch
        for name in names {
            // A file that does not exist yet is watched when it appears; any other failure (the watch limit,
            // no read access) would leave its writes unseen.
            let code = watchFile(name)
            // Thrown with every property set: deinit closes the descriptor.
            guard code == 0 || code == ENOENT else {
                throw SystemError(call: "inotify_add_watch", code: code, subject: directory + "/" + name)
            }
        }
    }

    deinit { close(descriptor) }

    /// Watches the file `name` for writes, when it exists (its watch follows its inode): 0, or the error.
    @discardableResult
    private func watchFile(_ name: String) -> Int32 {
        let watch = inotify_add_watch(descriptor, directory + "/" + name, UInt32(IN_MODIFY | IN_CLOSE_WRITE))
        guard watch >= 0 else { return errno }
        fileWatches[watch] = name
        return 0
    }

    /// Reads every pending event; true when one concerned a watched name (a write, or the file appearing:
    /// its new inode is watched from now on).
    public func drain() -> Bool {
        var relevant = false
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count <= 0 { return relevant }
            var offset = 0
            let header = MemoryLayout<inotify_event>.size
            while offset + header <= count {
                let (watch, mask, length) = buffer.withUnsafeBytes { raw in
                    (
                        raw.loadUnaligned(fromByteOffset: offset, as: Int32.self),
                        raw.loadUnaligned(fromByteOffset: offset + MemoryLayout<Int32>.size, as: UInt32.self),
                        Int(
                            raw.loadUnaligned(
                                fromByteOffset: offset + header - MemoryLayout<UInt32>.size,
                                as: UInt32.self
                            )
                        )
                    )
                }
                let nameStart = offset + header
                let nameEnd = min(count, nameStart + length)
                if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                    // Events were lost: any may have been a write, or a file appearing (watched again).
                    relevant = true
                    for name in names { watchFile(name) }
                } else if watch == directoryWatch {
                    let name = String(decoding: buffer[nameStart..<nameEnd].prefix { $0 != 0 }, as: UTF8.self)
                    if names.contains(name) {
                        relevant = true
                        watchFile(name)
                    }
                } else if mask & UInt32(IN_IGNORED) != 0 {
                    fileWatches[watch] = nil  // the file is gone: its watch with it
                } else if fileWatches[watch] != nil {
                    relevant = true
                }
                offset = nameStart + length
            }
        }
    }
}
