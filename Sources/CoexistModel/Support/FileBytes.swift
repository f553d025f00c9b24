#if canImport(Glibc)
internal import Glibc
#endif

/// Reading small files whole, without Foundation.
enum FileBytes {
    /// Files larger than this are refused: models and plists are kilobytes, never gigabytes.
    static let sizeLimit = 64 << 20

    /// The bytes of the regular file at `path`.
    static func read(_ path: String) throws(ModelError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw ModelError(.missingFile, file: path, message: "cannot open: \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            throw ModelError(.missingFile, file: path, message: "not a regular file")
        }
        guard info.st_size <= sizeLimit else {
            throw ModelError(file: path, message: "file is larger than \(sizeLimit >> 20) MiB")
        }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { buffer in
                Glibc.read(descriptor, buffer.baseAddress! + filled, buffer.count - filled)
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                throw ModelError(.missingFile, file: path, message: "read failed: \(String(cString: strerror(errno)))")
            }
            filled += count
        }
        return bytes
    }

    /// Whether `path` names a directory.
    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// Whether something exists at `path`.
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    /// The names in directory `path`, sorted, without `.` and `..`.
    static func directoryEntries(_ path: String) throws(ModelError) -> [String] {
        guard let directory = opendir(path) else {
            throw ModelError(.missingFile, file: path, message: "cannot list: \(String(cString: strerror(errno)))")
        }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }
}
