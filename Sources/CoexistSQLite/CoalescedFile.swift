import CSQLite

/// A database or WAL file the VFS wrapped: the default VFS's file inside, and for a WAL, the buffered run
/// of writes.
final class CoalescedFile {
    let inner: UnsafeMutablePointer<sqlite3_file>
    let methods: sqlite3_io_methods
    let isWAL: Bool
    /// A WAL's database file, and a database file's WAL, while both are open.
    weak var database: CoalescedFile?
    weak var wal: CoalescedFile?
    private var buffer: UnsafeMutableRawPointer?
    private var allocated = 0
    /// The file offset of the buffer's first byte, and how many it holds.
    private var start: Int64 = 0
    private var count = 0
    /// The last frame header buffered ends a transaction: its page is the commit's last write.
    private var commitFrame = false

    init(inner: UnsafeMutablePointer<sqlite3_file>, isWAL: Bool) {
        self.inner = inner
        // The default VFS's methods, copied: read at each call without following a pointer.
        methods = inner.pointee.pMethods.pointee
        self.isWAL = isWAL
    }

    /// SQLite's write of `amount` bytes at `offset`: buffered, or written with the buffer.
    func write(_ data: UnsafeRawPointer?, _ amount: Int32, _ offset: Int64) -> Int32 {
        guard let data, amount > 0 else { return methods.xWrite?(inner, data, amount, offset) ?? SQLITE_MISUSE }
        let length = Int(amount)
        if count > 0, offset != start + Int64(count) || count + length > CoalescingVFS.capacity {
            let written = flush()
            guard written == SQLITE_OK else { return written }
        }
        guard length <= CoalescingVFS.capacity else {
            let written = flush()
            guard written == SQLITE_OK else { return written }
            return methods.xWrite?(inner, data, amount, offset) ?? SQLITE_MISUSE
        }
        let buffer = reserve(count + length)
        if count == 0 { start = offset }
        (buffer + count).copyMemory(from: data, byteCount: length)
        count += length
        if length == Self.frameHeaderSize {
            // Bytes 4–7 of a frame header: the database size after the commit it ends, 0 for other frames.
            commitFrame = (4..<8).contains { data.load(fromByteOffset: $0, as: UInt8.self) != 0 }
            return SQLITE_OK
        }
        if commitFrame {
            commitFrame = false
            return flush()
        }
        return SQLITE_OK
    }

    /// Writes the buffer (SQLITE_OK when empty). On failure the buffer is dropped (SQLite rolls the
    /// transaction back), or kept with `keepingOnFailure`, for a caller that cannot report the error.
    @discardableResult
    func flush(keepingOnFailure: Bool = false) -> Int32 {
        guard count > 0, let buffer else { return SQLITE_OK }
        let written = methods.xWrite?(inner, buffer, Int32(count), start) ?? SQLITE_MISUSE
        if written == SQLITE_OK || !keepingOnFailure {
            count = 0
            commitFrame = false
        }
        return written
    }

    /// A database file's WAL's ``flush(keepingOnFailure:)`` (SQLITE_OK without one).
    @discardableResult
    func flushWAL(keepingOnFailure: Bool = false) -> Int32 {
        wal?.flush(keepingOnFailure: keepingOnFailure) ?? SQLITE_OK
    }

    /// Frees the buffer.
    func release() {
        buffer?.deallocate()
        buffer = nil
        allocated = 0
        count = 0
    }

    deinit { buffer?.deallocate() }

    /// The buffer, with room for `bytes` (at most the capacity; 64 KiB, then the capacity).
    private func reserve(_ bytes: Int) -> UnsafeMutableRawPointer {
        if let buffer, bytes <= allocated { return buffer }
        var size = max(allocated, 64 << 10)
        while size < bytes { size *= 2 }
        size = min(size, CoalescingVFS.capacity)
        let grown = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        if let buffer {
            grown.copyMemory(from: buffer, byteCount: count)
            buffer.deallocate()
        }
        buffer = grown
        allocated = size
        return grown
    }

    /// The size of a WAL frame's header (SQLite writes it, then the page, with two calls).
    static let frameHeaderSize = 24
}
