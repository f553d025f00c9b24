#if canImport(Glibc)
internal import Glibc
#endif

/// The first 100 bytes of an SQLite database file, checked before SQLite opens it
/// (https://www.sqlite.org/fileformat2.html#the_database_header).
///
/// SQLite opens a truncated file happily and fails later, on whichever page is missing; checking the
/// header's page count against the file size turns that into one clear message up front. In WAL mode the
/// header may rightly describe pages the file does not have yet: a checkpoint writes page 1 (with the new
/// count) before the pages after it, and a process killed in between leaves those pages in the WAL, from
/// which every reader takes them. So a WAL-mode file with frames in its `-wal` is not called truncated
/// for that.
public struct DatabaseFileHeader: Sendable, Equatable {
    /// The page size in bytes (512…65536).
    public var pageSize: Int
    /// The database size in pages recorded in the header (valid when the two change counters agree).
    public var pageCount: Int
    /// Whether ``pageCount`` is trustworthy (the header's "version-valid-for" equals its change counter).
    public var pageCountIsValid: Bool
    /// File format write and read versions: 2 and 2 for WAL mode.
    public var writeVersion: UInt8
    public var readVersion: UInt8
    /// The size of the file in bytes.
    public var fileSize: Int

    /// What is wrong with a file that should be an SQLite database.
    public enum Problem: Error, Sendable, Equatable, CustomStringConvertible {
        case unreadable(path: String, reason: String)
        case empty(path: String)
        case notSQLite(path: String)
        case truncated(path: String, expectedBytes: Int, actualBytes: Int)

        public var description: String {
            switch self {
            case .unreadable(let path, let reason): "\(path): cannot read the file (\(reason))"
            case .empty(let path): "\(path): the file is empty, not an SQLite database"
            case .notSQLite(let path): "\(path): not an SQLite database (no \"SQLite format 3\" header)"
            case .truncated(let path, let expected, let actual):
                "\(path): the database is truncated: its header describes \(expected) bytes, the file has \(actual)"
            }
        }
    }

    /// Reads and checks the header of the file at `path`.
    ///
    /// It opens and closes the file: never call it while this process has an SQLite connection to the
    /// same file, since closing any descriptor of a file drops every POSIX lock the process holds on it
    /// (SQLite's included), and another process may then delete a WAL this one still uses. A process with
    /// connections reads the header through a descriptor it keeps (``read(descriptor:path:)``).
    public static func read(path: String) throws(Problem) -> DatabaseFileHeader {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
        defer { close(descriptor) }
        return try read(descriptor: descriptor, path: path)
    }

    /// Reads and checks the header through an open `descriptor` of the file at `path` (with `pread`: the
    /// descriptor's offset does not move); `live`: as seen by open connections (see the type).
    public static func read(
        descriptor: Int32,
        path: String,
        live: Bool = false
    ) throws(Problem)
        -> DatabaseFileHeader
    {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw .unreadable(path: path, reason: String(cString: strerror(errno)))
        }
        if (info.st_mode & S_IFMT) == S_IFDIR { throw .unreadable(path: path, reason: "it is a directory") }
        let fileSize = Int(info.st_size)
        if fileSize == 0 { throw .empty(path: path) }
        var bytes = [UInt8](repeating: 0, count: 100)
        var filled = 0
        while filled < 100 {
            let count = bytes.withUnsafeMutableBytes { buffer in
                pread(descriptor, buffer.baseAddress.map { $0 + filled }, 100 - filled, off_t(filled))
            }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            filled += count
        }
        let magic: [UInt8] = Array("SQLite format 3\0".utf8)
        guard filled == 100, Array(bytes[0..<16]) == magic else { throw .notSQLite(path: path) }
        func be32(_ offset: Int) -> Int {
            Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8
                | Int(bytes[offset + 3])
        }
        let rawPageSize = Int(bytes[16]) << 8 | Int(bytes[17])
        let pageSize = rawPageSize == 1 ? 65_536 : rawPageSize
        guard pageSize >= 512, pageSize <= 65_536, pageSize & (pageSize - 1) == 0 else { throw .notSQLite(path: path) }
        let header = DatabaseFileHeader(
            pageSize: pageSize,
            pageCount: be32(28),
            pageCountIsValid: be32(92) == be32(24) && be32(28) > 0,
            writeVersion: bytes[18],
            readVersion: bytes[19],
            fileSize: fileSize
        )
        if header.pageCountIsValid && header.pageCount * pageSize > fileSize
            && !(header.isWAL
                && !live && walHolds(pages: (fileSize / pageSize + 1)...header.pageCount, of: path, pageSize: pageSize))
        {
            throw .truncated(path: path, expectedBytes: header.pageCount * pageSize, actualBytes: fileSize)
        }
        if fileSize % pageSize != 0 {
            throw .truncated(path: path, expectedBytes: (fileSize / pageSize + 1) * pageSize, actualBytes: fileSize)
        }
        return header
    }

    /// Whether the `-wal` beside `path` holds a frame for each of `pages`: frames (a 24-byte header, then
    /// the page) after the WAL's 32-byte header whose salts are the WAL header's (the frames of its current
    /// generation; https://www.sqlite.org/fileformat2.html#walformat). Reads frame headers only.
    static func walHolds(pages: ClosedRange<Int>, of path: String, pageSize: Int) -> Bool {
        let descriptor = open(path + "-wal", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        func bytes(_ count: Int, at offset: Int) -> [UInt8]? {
            var buffer = [UInt8](repeating: 0, count: count)
            let read = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, count, off_t(offset)) }
            return read == count ? buffer : nil
        }
        func be32(_ bytes: [UInt8], _ offset: Int) -> Int {
            Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8
                | Int(bytes[offset + 3])
        }
        guard let header = bytes(32, at: 0), be32(header, 8) == pageSize else { return false }
        let salts = Array(header[16..<24])
        var missing = Set(pages)
        var offset = 32
        while !missing.isEmpty, let frame = bytes(24, at: offset), Array(frame[8..<16]) == salts {
            missing.remove(be32(frame, 0))
            offset += 24 + pageSize
        }
        return missing.isEmpty
    }

    /// True when the header says the file is in WAL mode (format versions 2 and 2).
    public var isWAL: Bool { writeVersion == 2 && readVersion == 2 }
}
