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
/// written (``CoalescedFile`` has the rules):
/// - with the page of the commit frame, by that page's own call: the commit is in the file when SQLite's
///   call returns, before SQLite publishes it in the shared WAL index, so no reader can see a frame that is
///   not in the file, and a failure is reported to SQLite as the commit's;
/// - when a write does not follow the kept ones, or would overflow the buffer;
/// - before any other call on the `-wal` (read, sync, size, truncate, close) and before its database file's
///   sync, unlock, shared-memory locks, barrier (where SQLite publishes a commit), unmap and close.
///
/// What a crash leaves is what it left before: frames past the last commit are ignored by SQLite's
/// recovery, written or not. A failed write of kept frames fails the whole transaction. Every other file
/// (journals, temporary files) is the default VFS's own, untouched.
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
        guard let innerMethods = inner.pointee.pMethods else {
            file.pointee.pMethods = nil
            return code
        }
        guard innerMethods.pointee.iVersion >= 3 else {
            // An older default VFS: closed and opened again as it is, unwrapped.
            _ = innerMethods.pointee.xClose?(inner)
            return realOpen(real, name, file, flags, outFlags)
        }
        let state = CoalescedFile(inner: inner, isWAL: isWAL, path: name.map { String(cString: $0) } ?? "")
        if isWAL, let name, let database = sqlite3_database_file_object(name) { wrapped(database)?.wal = state }
        (raw + stateOffset).storeBytes(of: Unmanaged.passRetained(state).toOpaque(), as: UnsafeMutableRawPointer.self)
        file.pointee.pMethods = UnsafePointer(Self.methods)
        return code
    }

    /// The state of a file this VFS wrapped (nil for any other).
    static func wrapped(_ file: UnsafeMutablePointer<sqlite3_file>?) -> CoalescedFile? {
        guard let file, file.pointee.pMethods == UnsafePointer(Self.methods) else { return nil }
        let opaque = (UnsafeMutableRawPointer(file) + stateOffset).load(as: UnsafeMutableRawPointer.self)
        return Unmanaged<CoalescedFile>.fromOpaque(opaque).takeUnretainedValue()
    }

    /// Ends a wrapped file: its WAL's kept run written, the default VFS's file closed, the state released.
    static func close(_ file: UnsafeMutablePointer<sqlite3_file>?) -> Int32 {
        guard let file, let state = wrapped(file) else { return SQLITE_MISUSE }
        let code = call(file, wal: .release, database: .release) { $0.xClose?($1) }
        state.release()
        let opaque = (UnsafeMutableRawPointer(file) + stateOffset).load(as: UnsafeMutableRawPointer.self)
        Unmanaged<CoalescedFile>.fromOpaque(opaque).release()
        file.pointee.pMethods = nil
        return code
    }

    /// What a method does first, for a WAL and for its database file.
    private enum Step {
        /// Nothing: the default VFS's method at once.
        case forward
        /// The WAL settled; on failure the method is not called (the error is returned).
        case settle
        /// The WAL settled (for a database file: its commit published), then the method whatever that
        /// gave: it releases something (a lock, a mapping, the file) or only answers.
        case release
    }

    /// The methods of both wrapped files: a WAL settles its kept run before every call but a write; its
    /// database file forwards everything but what ends a transaction or publishes a commit (sync, unlock,
    /// shared-memory locks and barrier, unmap, close).
    nonisolated(unsafe) private static let methods: UnsafeMutablePointer<sqlite3_io_methods> = {
        let methods = UnsafeMutablePointer<sqlite3_io_methods>.allocate(capacity: 1)
        methods.initialize(
            to: sqlite3_io_methods(
                iVersion: 3,
                xClose: { CoalescingVFS.close($0) },
                xRead: { file, data, amount, offset in
                    CoalescingVFS.call(file, wal: .settle) { $0.xRead?($1, data, amount, offset) }
                },
                xWrite: { file, data, amount, offset in
                    guard let state = CoalescingVFS.wrapped(file) else { return SQLITE_MISUSE }
                    guard state.isWAL else {
                        return state.methods.xWrite?(state.inner, data, amount, offset) ?? SQLITE_MISUSE
                    }
                    return state.write(data, amount, offset)
                },
                xTruncate: { file, size in CoalescingVFS.call(file, wal: .settle) { $0.xTruncate?($1, size) } },
                xSync: { file, flags in
                    CoalescingVFS.call(file, wal: .settle, database: .settle) { $0.xSync?($1, flags) }
                },
                xFileSize: { file, size in CoalescingVFS.call(file, wal: .settle) { $0.xFileSize?($1, size) } },
                xLock: { file, level in CoalescingVFS.call(file, wal: .settle) { $0.xLock?($1, level) } },
                xUnlock: { file, level in
                    CoalescingVFS.call(file, wal: .release, database: .release) { $0.xUnlock?($1, level) }
                },
                xCheckReservedLock: { file, out in
                    CoalescingVFS.call(file, wal: .settle) { $0.xCheckReservedLock?($1, out) }
                },
                xFileControl: { file, op, argument in
                    CoalescingVFS.call(file, wal: .settle) { $0.xFileControl?($1, op, argument) }
                },
                xSectorSize: { file in CoalescingVFS.call(file, wal: .release) { $0.xSectorSize?($1) } },
                xDeviceCharacteristics: { file in
                    CoalescingVFS.call(file, wal: .release) { $0.xDeviceCharacteristics?($1) }
                },
                xShmMap: { file, page, size, extend, out in
                    CoalescingVFS.call(file, wal: .settle) { $0.xShmMap?($1, page, size, extend, out) }
                },
                xShmLock: { file, offset, count, flags in CoalescingVFS.sharedLock(file, offset, count, flags) },
                xShmBarrier: { file in CoalescingVFS.barrier(file) },
                xShmUnmap: { file, delete in
                    CoalescingVFS.call(file, wal: .release, database: .release) { $0.xShmUnmap?($1, delete) }
                },
                xFetch: { file, offset, amount, out in
                    CoalescingVFS.call(file, wal: .settle) { $0.xFetch?($1, offset, amount, out) }
                },
                xUnfetch: { file, offset, pointer in
                    CoalescingVFS.call(file, wal: .release) { $0.xUnfetch?($1, offset, pointer) }
                }
            )
        )
        return methods
    }()

    /// `call` on the default VFS's file after the step for the file's kind (SQLITE_MISUSE for a file not
    /// wrapped, or a method it lacks).
    private static func call(
        _ file: UnsafeMutablePointer<sqlite3_file>?,
        wal: Step,
        database: Step = .forward,
        _ call: (sqlite3_io_methods, UnsafeMutablePointer<sqlite3_file>) -> Int32?
    ) -> Int32 {
        guard let state = wrapped(file) else { return SQLITE_MISUSE }
        switch state.isWAL ? wal : database {
        case .forward: break
        case .settle:
            let settled = (state.isWAL ? state : state.wal)?.settle() ?? SQLITE_OK
            guard settled == SQLITE_OK else { return settled }
        case .release: _ = state.isWAL ? state.settle() : state.wal?.published()
        }
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
        let code = call(file, wal: .release, database: .release) { $0.xShmLock?($1, offset, count, flags) }
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

    private static let injected = InjectedFailures()
    private static let anyInjected = Atomic<Bool>(false)
}

/// Tests only: the WAL write failures to inject, by path (``CoalescingVFS/failWrite(ofWALAt:after:)``).
/// Behind a pthread mutex, not `Synchronization.Mutex`: when that mutex's futex is contended the kernel hands
/// it over, which ThreadSanitizer does not see, so it reported a test injecting failures while another test
/// wrote (and looked its path up) as a race.
private final class InjectedFailures: @unchecked Sendable {
    private let lock: UnsafeMutablePointer<pthread_mutex_t>
    private var failures: [String: Int] = [:]

    init() {
        lock = .allocate(capacity: 1)
        lock.initialize(to: pthread_mutex_t())
        pthread_mutex_init(lock, nil)
    }

    deinit {
        pthread_mutex_destroy(lock)
        lock.deallocate()
    }

    /// `body`'s result, with the failures to itself while it runs.
    func withLock<T>(_ body: (inout [String: Int]) -> T) -> T {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        return body(&failures)
    }
}
