import CSQLite
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The VFS every ``Connection`` opens its database with: the platform's default one (`unix`), but for a
/// database in WAL mode the frames a commit appends to the `-wal` go to the file in one `pwrite`.
///
/// SQLite writes each WAL frame with two calls, its 24-byte header then its page: a one-row save of a Core
/// Data store appends 12–20 frames, so 24–40 `pwrite`s, each a system call and an inotify event for every
/// process watching the file (measured with `strace -e pwrite64` on Debian's SQLite 3.40.1). Here the
/// `-wal` writes of a transaction that follow one another are kept in a buffer of the connection's and
/// written when:
/// - the page of a commit frame arrives (a frame header whose "database size after commit" is not 0): the
///   save's last `xWrite` returns the result of the one write, before SQLite publishes the commit in the
///   shared WAL index, so no reader can see a frame that is not in the file;
/// - a write does not follow the buffered ones, or would overflow the buffer;
/// - any other call reaches the `-wal` (read, sync, size, truncate, close) or reaches its database file's
///   locks and shared-memory barrier (`xShmBarrier` is where SQLite publishes a commit: nothing is ever
///   left buffered past it, even if the frame layout changed).
///
/// What a crash leaves is what it left before: frames past the last commit are ignored by SQLite's
/// recovery, written or not. A failed write is reported by the call that wrote: an error makes SQLite put
/// the pager in its error state and roll the whole transaction back (`SQLITE_FULL` and `SQLITE_IOERR` do),
/// so no frame it believed written is ever read back. Every other file (journals, temporary files) is the
/// default VFS's own, untouched.
package enum CoalescingVFS {
    /// The name ``Connection`` opens with; nil when it could not be registered (the default VFS is used).
    static let name: String? = register()

    /// The largest run of writes kept (124 KiB, 30 frames of 4 KiB pages): a longer transaction goes to the
    /// file in runs of at most this size. The `unix` VFS writes fewer than 128 KiB per call: its
    /// `seekAndWriteFd` masks the length with `0x1ffff`, and a longer write comes back short, as
    /// `SQLITE_FULL` (measured: a 256 KiB run failed every large commit of the test suite that way).
    static let capacity = 0x1F000

    /// Byte offsets in a wrapped file: SQLite's `sqlite3_file` (its methods), then the state, then the
    /// default VFS's file.
    private static let stateOffset = MemoryLayout<sqlite3_file>.stride
    private static let realOffset = stateOffset + MemoryLayout<UnsafeRawPointer>.stride

    /// Registers the VFS (not as the default: other code in the process keeps its own).
    private static func register() -> String? {
        guard let real = sqlite3_vfs_find(nil), real.pointee.iVersion >= 1 else { return nil }
        let vfs = UnsafeMutablePointer<sqlite3_vfs>.allocate(capacity: 1)
        vfs.initialize(to: real.pointee)
        let name = "coexist-wal"
        vfs.pointee.zName = UnsafePointer(strdup(name))
        vfs.pointee.pNext = nil
        vfs.pointee.szOsFile = Int32(realOffset) + real.pointee.szOsFile
        // The default VFS's own functions take this one: they ignore it (`unix`), but `xOpen`, which reads
        // its data, is called with the default VFS.
        vfs.pointee.pAppData = UnsafeMutableRawPointer(real)
        vfs.pointee.xOpen = { vfs, name, file, flags, outFlags in
            CoalescingVFS.open(vfs, name, file, flags, outFlags)
        }
        guard sqlite3_vfs_register(vfs, 0) == SQLITE_OK else { return nil }
        return name
    }

    private static func open(
        _ vfs: UnsafeMutablePointer<sqlite3_vfs>?,
        _ name: sqlite3_filename?,
        _ file: UnsafeMutablePointer<sqlite3_file>?,
        _ flags: Int32,
        _ outFlags: UnsafeMutablePointer<Int32>?
    ) -> Int32 {
        guard let vfs, let file, let realRaw = vfs.pointee.pAppData else { return SQLITE_CANTOPEN }
        let real = realRaw.assumingMemoryBound(to: sqlite3_vfs.self)
        guard let realOpen = real.pointee.xOpen else { return SQLITE_CANTOPEN }
        let isWAL = flags & SQLITE_OPEN_WAL != 0
        // Only the database and its WAL are wrapped: everything else is the default VFS's file, in place.
        guard isWAL || flags & SQLITE_OPEN_MAIN_DB != 0 else { return realOpen(real, name, file, flags, outFlags) }
        let raw = UnsafeMutableRawPointer(file)
        let inner = (raw + realOffset).assumingMemoryBound(to: sqlite3_file.self)
        let code = realOpen(real, name, inner, flags, outFlags)
        // SQLite reads the methods even after a failed open (nil: nothing to close).
        guard let methods = inner.pointee.pMethods else {
            file.pointee.pMethods = nil
            return code
        }
        guard methods.pointee.iVersion >= 3 else {
            // An older default VFS: closed and opened again as it is, unwrapped.
            _ = methods.pointee.xClose?(inner)
            return realOpen(real, name, file, flags, outFlags)
        }
        let state = CoalescedFile(inner: inner, isWAL: isWAL, path: name.map { String(cString: $0) } ?? "")
        if isWAL, let name, let database = sqlite3_database_file_object(name), let owner = wrapped(database) {
            owner.wal = state
            state.database = owner
        }
        (raw + stateOffset).storeBytes(of: Unmanaged.passRetained(state).toOpaque(), as: UnsafeMutableRawPointer.self)
        file.pointee.pMethods = UnsafePointer(isWAL ? walMethods : databaseMethods)
        return code
    }

    /// The state of a file this VFS wrapped (nil for any other).
    static func wrapped(_ file: UnsafeMutablePointer<sqlite3_file>?) -> CoalescedFile? {
        guard let file, let methods = file.pointee.pMethods,
            methods == UnsafePointer(walMethods) || methods == UnsafePointer(databaseMethods)
        else { return nil }
        let opaque = (UnsafeMutableRawPointer(file) + stateOffset).load(as: UnsafeMutableRawPointer.self)
        return Unmanaged<CoalescedFile>.fromOpaque(opaque).takeUnretainedValue()
    }

    /// Ends a wrapped file: its WAL's kept run written, the default VFS's file closed, the state released.
    static func close(_ file: UnsafeMutablePointer<sqlite3_file>?) -> Int32 {
        guard let file, let state = wrapped(file) else { return SQLITE_MISUSE }
        let code = released(file) { $0.xClose?($1) }
        state.release()
        let opaque = (UnsafeMutableRawPointer(file) + stateOffset).load(as: UnsafeMutableRawPointer.self)
        Unmanaged<CoalescedFile>.fromOpaque(opaque).release()
        file.pointee.pMethods = nil
        return code
    }

    /// The WAL's methods: every call but a write settles the kept run first.
    nonisolated(unsafe) private static let walMethods: UnsafeMutablePointer<sqlite3_io_methods> = {
        let methods = UnsafeMutablePointer<sqlite3_io_methods>.allocate(capacity: 1)
        methods.initialize(
            to: sqlite3_io_methods(
                iVersion: 3,
                xClose: { CoalescingVFS.close($0) },
                xRead: { file, data, amount, offset in
                    CoalescingVFS.settled(file) { $0.xRead?($1, data, amount, offset) }
                },
                xWrite: { file, data, amount, offset in
                    guard let state = CoalescingVFS.wrapped(file) else { return SQLITE_MISUSE }
                    return state.write(data, amount, offset)
                },
                xTruncate: { file, size in CoalescingVFS.settled(file) { $0.xTruncate?($1, size) } },
                xSync: { file, flags in CoalescingVFS.settled(file) { $0.xSync?($1, flags) } },
                xFileSize: { file, size in CoalescingVFS.settled(file) { $0.xFileSize?($1, size) } },
                xLock: { file, level in CoalescingVFS.settled(file) { $0.xLock?($1, level) } },
                xUnlock: { file, level in CoalescingVFS.released(file) { $0.xUnlock?($1, level) } },
                xCheckReservedLock: { file, out in CoalescingVFS.settled(file) { $0.xCheckReservedLock?($1, out) } },
                xFileControl: { file, op, argument in
                    CoalescingVFS.settled(file) { $0.xFileControl?($1, op, argument) }
                },
                xSectorSize: { file in CoalescingVFS.released(file) { $0.xSectorSize?($1) } },
                xDeviceCharacteristics: { file in
                    CoalescingVFS.released(file) { $0.xDeviceCharacteristics?($1) }
                },
                xShmMap: { file, page, size, extend, out in
                    CoalescingVFS.settled(file) { $0.xShmMap?($1, page, size, extend, out) }
                },
                xShmLock: { file, offset, count, flags in
                    CoalescingVFS.released(file) { $0.xShmLock?($1, offset, count, flags) }
                },
                xShmBarrier: { file in CoalescingVFS.barrier(file) },
                xShmUnmap: { file, delete in CoalescingVFS.released(file) { $0.xShmUnmap?($1, delete) } },
                xFetch: { file, offset, amount, out in
                    CoalescingVFS.settled(file) { $0.xFetch?($1, offset, amount, out) }
                },
                xUnfetch: { file, offset, pointer in
                    CoalescingVFS.released(file) { $0.xUnfetch?($1, offset, pointer) }
                }
            )
        )
        return methods
    }()

    /// The database file's methods: forwarded; its WAL's kept run settled first by those that end a
    /// transaction or publish in the WAL index (shared-memory locks and barrier, file unlock, sync).
    nonisolated(unsafe) private static let databaseMethods: UnsafeMutablePointer<sqlite3_io_methods> = {
        let methods = UnsafeMutablePointer<sqlite3_io_methods>.allocate(capacity: 1)
        methods.initialize(
            to: sqlite3_io_methods(
                iVersion: 3,
                xClose: { CoalescingVFS.close($0) },
                xRead: { file, data, amount, offset in
                    CoalescingVFS.forwarded(file) { $0.xRead?($1, data, amount, offset) }
                },
                xWrite: { file, data, amount, offset in
                    CoalescingVFS.forwarded(file) { $0.xWrite?($1, data, amount, offset) }
                },
                xTruncate: { file, size in CoalescingVFS.forwarded(file) { $0.xTruncate?($1, size) } },
                xSync: { file, flags in CoalescingVFS.settled(file) { $0.xSync?($1, flags) } },
                xFileSize: { file, size in CoalescingVFS.forwarded(file) { $0.xFileSize?($1, size) } },
                xLock: { file, level in CoalescingVFS.forwarded(file) { $0.xLock?($1, level) } },
                xUnlock: { file, level in CoalescingVFS.released(file) { $0.xUnlock?($1, level) } },
                xCheckReservedLock: { file, out in CoalescingVFS.forwarded(file) { $0.xCheckReservedLock?($1, out) } },
                xFileControl: { file, op, argument in
                    CoalescingVFS.forwarded(file) { $0.xFileControl?($1, op, argument) }
                },
                xSectorSize: { file in CoalescingVFS.forwarded(file) { $0.xSectorSize?($1) } },
                xDeviceCharacteristics: { file in
                    CoalescingVFS.forwarded(file) { $0.xDeviceCharacteristics?($1) }
                },
                xShmMap: { file, page, size, extend, out in
                    CoalescingVFS.forwarded(file) { $0.xShmMap?($1, page, size, extend, out) }
                },
                xShmLock: { file, offset, count, flags in
                    CoalescingVFS.sharedLock(file, offset, count, flags)
                },
                xShmBarrier: { file in CoalescingVFS.barrier(file) },
                xShmUnmap: { file, delete in CoalescingVFS.released(file) { $0.xShmUnmap?($1, delete) } },
                xFetch: { file, offset, amount, out in
                    CoalescingVFS.forwarded(file) { $0.xFetch?($1, offset, amount, out) }
                },
                xUnfetch: { file, offset, pointer in
                    CoalescingVFS.forwarded(file) { $0.xUnfetch?($1, offset, pointer) }
                }
            )
        )
        return methods
    }()

    /// `call` on the default VFS's file (SQLITE_MISUSE for a file not wrapped, or a method it lacks).
    private static func forwarded(
        _ file: UnsafeMutablePointer<sqlite3_file>?,
        _ call: (sqlite3_io_methods, UnsafeMutablePointer<sqlite3_file>) -> Int32?
    ) -> Int32 {
        guard let state = wrapped(file) else { return SQLITE_MISUSE }
        return call(state.methods, state.inner) ?? SQLITE_MISUSE
    }

    /// The WAL (the file's own, or its database's) settled, then `call`; not called when that fails (the
    /// error is returned).
    private static func settled(
        _ file: UnsafeMutablePointer<sqlite3_file>?,
        _ call: (sqlite3_io_methods, UnsafeMutablePointer<sqlite3_file>) -> Int32?
    ) -> Int32 {
        guard let state = wrapped(file) else { return SQLITE_MISUSE }
        let settled = (state.isWAL ? state : state.wal)?.settle() ?? SQLITE_OK
        guard settled == SQLITE_OK else { return settled }
        return call(state.methods, state.inner) ?? SQLITE_MISUSE
    }

    /// The WAL settled, then `call` whatever that gave, and its result: it releases something (a lock, a
    /// mapping, the file) or only answers. A failure to write what was kept stays the WAL's, for its next
    /// data call; a lock SQLite believes it took or released is never left otherwise.
    private static func released(
        _ file: UnsafeMutablePointer<sqlite3_file>?,
        _ call: (sqlite3_io_methods, UnsafeMutablePointer<sqlite3_file>) -> Int32?
    ) -> Int32 {
        guard let state = wrapped(file) else { return SQLITE_MISUSE }
        _ = state.isWAL ? state.settle() : state.wal?.published()
        return call(state.methods, state.inner) ?? SQLITE_MISUSE
    }

    /// The database's shared-memory locks, taken or released after the WAL is settled; releasing the WAL's
    /// write lock (slot 0) ends the transaction, and a failure with it.
    private static func sharedLock(
        _ file: UnsafeMutablePointer<sqlite3_file>?,
        _ offset: Int32,
        _ count: Int32,
        _ flags: Int32
    ) -> Int32 {
        let code = released(file) { $0.xShmLock?($1, offset, count, flags) }
        if offset == 0, flags & SQLITE_SHM_UNLOCK != 0, flags & SQLITE_SHM_EXCLUSIVE != 0 {
            wrapped(file)?.wal?.writeLockReleased()
        }
        return code
    }

    /// The memory barrier SQLite puts between a commit's WAL-index entries and the header that publishes
    /// them: the WAL is settled before it. A commit's frames are written by their own calls, so nothing of
    /// one should be kept this late; if something is and cannot be written, the process stops here, before
    /// the commit is published (it cannot report an error, and a published commit would name frames the
    /// file does not hold); recovery then ignores the unpublished commit.
    private static func barrier(_ file: UnsafeMutablePointer<sqlite3_file>?) {
        guard let state = wrapped(file) else { return }
        let wal = state.isWAL ? state : state.wal
        if let wal, wal.failure == nil, wal.published() != SQLITE_OK {
            let message =
                "coexist: the WAL of \(wal.path) could not be written before a commit was published; stopping\n"
            _ = message.utf8CString.withUnsafeBufferPointer { Glibc.write(2, $0.baseAddress, $0.count - 1) }
            abort()
        }
        state.methods.xShmBarrier?(state.inner)
    }

    /// Tests only: the next write of a kept run of the WAL at `path` fails (`SQLITE_IOERR_WRITE`) after
    /// `runs` more succeed.
    package static func failWrite(ofWALAt path: String, after runs: Int) {
        injected.withLock { $0[path] = runs }
        anyInjected.store(true, ordering: .releasing)
    }

    /// Whether this write of a kept run of the WAL at `path` is to fail (see ``failWrite(ofWALAt:after:)``).
    static func injectedFailure(_ path: String) -> Bool {
        guard anyInjected.load(ordering: .acquiring) else { return false }
        return injected.withLock { failures in
            guard let runs = failures[path] else { return false }
            if runs > 0 {
                failures[path] = runs - 1
                return false
            }
            failures[path] = nil
            return true
        }
    }

    private static let injected = Mutex<[String: Int]>([:])
    private static let anyInjected = Atomic<Bool>(false)
}
