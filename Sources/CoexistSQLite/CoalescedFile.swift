import CSQLite

/// A database or WAL file ``CoalescingVFS`` wrapped: the default VFS's file inside, and for a WAL, the run
/// of writes kept for one call.
///
/// A WAL's writes, frame by frame (SQLite writes a 24-byte header, then the page):
/// - a frame that follows the kept ones is kept, unless its page might not fit after it (then the kept
///   ones are written first);
/// - the header of a commit frame is kept only when it follows kept frames with room for its page; its page
///   is then kept and everything written at once, by that page's call. Otherwise (a one-frame commit, a
///   header rewritten in place by `walRewriteChecksums`, no room) it is written at once with what is
///   kept. Either way the commit is in the file when SQLite's call returns, before SQLite publishes it;
/// - after a commit frame, writes go straight to the file (sync padding, split by a sync of its own) until
///   the database's next shared-memory barrier or lock call, or the file closes.
///
/// A failed write of kept frames fails every later read, write, sync and size of the WAL with
/// `SQLITE_IOERR_WRITE` until the WAL's write lock is released: SQLite rolls the whole transaction back on
/// an I/O error (a `SQLITE_FULL` from a statement that has a statement journal would roll back that
/// statement only, and a later commit could then publish frames that were never written).
final class CoalescedFile {
    let inner: UnsafeMutablePointer<sqlite3_file>
    let methods: sqlite3_io_methods
    let isWAL: Bool
    /// The file's name (a WAL's: what a test's injected failure names).
    let path: String
    /// A database file's WAL, while both are open.
    weak var wal: CoalescedFile?
    /// The error every data call of the WAL returns since a kept run failed to write.
    private(set) var failure: Int32?
    private var buffer: UnsafeMutableRawPointer?
    private var allocated = 0
    /// The file offset of the buffer's first byte, and how many it holds.
    private var start: Int64 = 0
    private var count = 0
    /// The size of the last page written (the largest SQLite allows until one is seen).
    private var pageSize = 65_536
    /// A commit frame's header is kept: its page, next, is written with the run.
    private var awaitingCommitPage = false
    /// A commit frame was written: writes go to the file until the commit is published (``published()``).
    private var direct = false

    init(inner: UnsafeMutablePointer<sqlite3_file>, isWAL: Bool, path: String) {
        self.inner = inner
        // The default VFS's methods, copied: read at each call without following a pointer.
        methods = inner.pointee.pMethods.pointee
        self.isWAL = isWAL
        self.path = path
    }

    deinit { buffer?.deallocate() }

    /// SQLite's write of `amount` bytes at `offset` to the WAL.
    func write(_ data: UnsafeRawPointer?, _ amount: Int32, _ offset: Int64) -> Int32 {
        if let failure { return failure }
        guard let data, amount > 0, !direct else { return writeNow(data, amount, offset) }
        let length = Int(amount)
        let follows = count > 0 && offset == start + Int64(count)
        if awaitingCommitPage {
            // The commit frame's page: written with the run, by this call.
            awaitingCommitPage = false
            direct = true
            if follows, count + length <= CoalescingVFS.capacity {
                append(data, length, at: offset)
                return flush()
            }
            let written = flush()
            return written == SQLITE_OK ? writeNow(data, amount, offset) : written
        }
        if length == Self.frameHeaderSize {
            let room = count + length + pageSize <= CoalescingVFS.capacity
            // Bytes 4–7 of a frame header: the database size after the commit it ends, 0 for other frames.
            if (4..<8).contains(where: { data.load(fromByteOffset: $0, as: UInt8.self) != 0 }) {
                if follows, room {
                    append(data, length, at: offset)
                    awaitingCommitPage = true
                    return SQLITE_OK
                }
                let written = flush()
                direct = true
                return written == SQLITE_OK ? writeNow(data, amount, offset) : written
            }
            if count > 0, !follows || !room {
                let written = flush()
                guard written == SQLITE_OK else { return written }
            }
            append(data, length, at: offset)
            return SQLITE_OK
        }
        if length >= 512, length <= 65_536 { pageSize = length }
        if count > 0, !follows || count + length > CoalescingVFS.capacity {
            let written = flush()
            guard written == SQLITE_OK else { return written }
        }
        guard length <= CoalescingVFS.capacity else { return writeNow(data, amount, offset) }
        append(data, length, at: offset)
        return SQLITE_OK
    }

    /// Before any call but a write: the kept run written (nothing is kept across another call). SQLITE_OK,
    /// the failure, or the write's error.
    func settle() -> Int32 {
        if let failure { return failure }
        return flush()
    }

    /// The database reached its shared-memory barrier or locks (a commit published, a transaction begun or
    /// ended): the run settled, and writes kept again.
    func published() -> Int32 {
        direct = false
        return settle()
    }

    /// The WAL's write lock was released: SQLite ended the transaction, a failure's with it.
    func writeLockReleased() {
        _ = published()
        failure = nil
    }

    /// Frees the buffer (the file is closing).
    func release() {
        buffer?.deallocate()
        buffer = nil
        allocated = 0
        count = 0
    }

    /// Writes the kept run (SQLITE_OK when none). A failure is kept: see the type's notes.
    private func flush() -> Int32 {
        awaitingCommitPage = false
        guard count > 0, let buffer else { return SQLITE_OK }
        // A test's injected failure is the default VFS's full disk.
        let written =
            CoalescingVFS.injectedFailure(path)
            ? SQLITE_FULL : methods.xWrite?(inner, buffer, Int32(count), start) ?? SQLITE_MISUSE
        count = 0
        guard written == SQLITE_OK else {
            failure = Self.writeError
            return Self.writeError
        }
        return SQLITE_OK
    }

    private func writeNow(_ data: UnsafeRawPointer?, _ amount: Int32, _ offset: Int64) -> Int32 {
        methods.xWrite?(inner, data, amount, offset) ?? SQLITE_MISUSE
    }

    private func append(_ data: UnsafeRawPointer, _ length: Int, at offset: Int64) {
        let buffer = reserve(count + length)
        if count == 0 { start = offset }
        (buffer + count).copyMemory(from: data, byteCount: length)
        count += length
    }

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

    /// `SQLITE_IOERR_WRITE` (a macro Swift does not import).
    static let writeError = SQLITE_IOERR | (3 << 8)

    /// The size of a WAL frame's header (SQLite writes it, then the page, with two calls).
    static let frameHeaderSize = 24
}
