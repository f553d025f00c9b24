import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import CoexistStore
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

extension Migrator {
    /// A read-write connection that never writes: for the backup (`VACUUM INTO` is refused under
    /// `query_only`) and the checks before the transaction.
    static let backupOptions = OpenOptions(
        access: .readWrite,
        walMode: false,
        synchronousNormal: false,
        foreignKeys: false,
        coreDataTriggerFunctions: false
    )

    /// The migration's connection: the journal mode left as the store has it (a failed run leaves the file
    /// byte-identical), foreign keys off while tables are rebuilt (checked at the end instead).
    static let migrationOptions = OpenOptions(access: .readWrite, walMode: false, foreignKeys: false)

    /// `VACUUM INTO` `<store>.backup-<version>-<UTC time>Z.sqlite` (`-2`, `-3` … for more in the same
    /// second), with the store's file mode; never over an existing file.
    static func backup(_ connection: Connection, of path: String, version: String) throws -> String {
        let stamp = ReferenceDate.iso8601(secondsSince2001: TransactionWriter.now())
            .filter { $0.isNumber || $0 == "T" }.prefix(15)
        let safe = String(version.map { $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" ? $0 : "_" })
        let base = "\(path).backup-\(safe)-\(stamp)Z"
        var status = stat()
        let mode = stat(path, &status) == 0 ? status.st_mode & 0o777 : 0o600
        // Made empty first, exclusively, with the store's mode (the data is never readable by more users
        // than the store's); VACUUM INTO fills an empty file. A second run in the same second gets the next name.
        for attempt in 1...1_000 {
            let target = attempt == 1 ? base + ".sqlite" : base + "-\(attempt).sqlite"
            let descriptor = open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)
            if descriptor < 0 && errno == EEXIST { continue }
            guard descriptor >= 0 else {
                throw LegacyStoreError.cannotCreate(path: target, reason: String(cString: strerror(errno)))
            }
            fchmod(descriptor, mode)
            close(descriptor)
            do {
                try connection.run("VACUUM INTO ?", [.text(target)])
            } catch {
                unlink(target)
                throw error
            }
            return target
        }
        throw LegacyStoreError.cannotCreate(path: base + ".sqlite", reason: "a thousand backups of this second exist")
    }

    /// A scratch copy of the store for a dry run, in a new private folder (mode 0700) of the temporary
    /// folder; returns the folder and the copy.
    static func scratchCopy(_ connection: Connection, of path: String) throws -> (folder: String, copy: String) {
        let parent = ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
        var template = Array("\(parent)/coexist-migrate-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw LegacyStoreError.cannotCreate(path: parent, reason: "no scratch folder for the dry run")
        }
        let folder = String(cString: made)
        let copy = folder + "/store.sqlite"
        do {
            try connection.run("VACUUM INTO ?", [.text(copy)])
        } catch {
            rmdir(folder)
            throw error
        }
        return (folder, copy)
    }
}
