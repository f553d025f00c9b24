import CoexistHistory
public import CoexistModel
import CoexistSQLite

#if canImport(Glibc)
internal import Glibc
#endif

/// Creates an empty Core Data store from a model, as Core Data would: entity tables and indexes,
/// `Z_PRIMARYKEY`, `Z_METADATA`, `Z_MODELCACHE`, the persistent-history tables, `auto_vacuum=2`, WAL.
///
/// `Z_MODELCACHE` is created empty: its content is a Core Data runtime archive we cannot produce faithfully;
/// coexist keeps its own copy of the model in `coexist_model` so the store reopens without a model file.
/// `NSStoreModelVersionHashes` is written only when the compiled model's hashes are supplied (§2.2):
/// Apple's hash algorithm is not public, and invented hashes would make Core Data migrate or refuse the store.
public enum StoreCreator {
    /// What to write besides the model's tables.
    public struct Options: Sendable {
        /// Create Core Data's persistent-history tables. Default true.
        public var history: Bool
        /// `NSStoreModelVersionHashes`: entity name → 32-byte hash, from a compiled `VersionInfo.plist`.
        public var versionHashes: [String: [UInt8]]?
        /// `NSPersistenceFrameworkVersion` to record (1522: macOS 26.1, the newest format we test against).
        public var frameworkVersion: Int
        /// The store UUID; a random one when nil.
        public var storeUUID: String?

        /// Creates options.
        public init(
            history: Bool = true,
            versionHashes: [String: [UInt8]]? = nil,
            frameworkVersion: Int = 1522,
            storeUUID: String? = nil
        ) {
            self.history = history
            self.versionHashes = versionHashes
            self.frameworkVersion = frameworkVersion
            self.storeUUID = storeUUID
        }
    }

    /// Creates the store at `path` (which must not exist) and returns it opened read-write.
    public static func create(
        path: String,
        model: Model,
        options: Options = Options()
    ) throws(LegacyStoreError) -> LegacyStore {
        try reserve(path)
        let layout = LegacyTableLayout(model: model, frameworkVersion: options.frameworkVersion)
        do {
            let connection = try Connection(
                path: path,
                options: OpenOptions(access: .readWriteCreate, walMode: false, coreDataTriggerFunctions: false)
            )
            try connection.execute("PRAGMA page_size=4096; PRAGMA auto_vacuum=2;")
            let statements = try layout.statements()
            try connection.write {
                for statement in statements { try connection.execute(statement) }
                try connection.execute(
                    "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)"
                )
                try connection.execute(
                    "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)"
                )
                try connection.execute("CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)")
                try StoredModel.write(model, to: connection)
                for entity in model.entities {
                    let parent = entity.superentity.flatMap { layout.numbers[$0] } ?? 0
                    try connection.run(
                        "INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, 0)",
                        [
                            .integer(Int64(layout.numbers[entity.name] ?? 0)), .text(entity.name),
                            .integer(Int64(parent)),
                        ]
                    )
                }
                if options.history {
                    try connection.execute(HistoryDDL.changeTable(tombstones: layout.tombstoneCount()))
                    for statement in HistoryDDL.otherStatements { try connection.execute(statement) }
                    for row in HistoryDDL.primaryKeyRows {
                        try connection.run(
                            "INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, 0, 0)",
                            [.integer(Int64(row.number)), .text(row.name)]
                        )
                    }
                }
                try connection.run(
                    "INSERT INTO Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) VALUES (1, ?, ?)",
                    [.text(options.storeUUID ?? randomUUID()), .blob(metadataPlist(model: model, options: options))]
                )
            }
            let mode = try connection.scalar("PRAGMA journal_mode=WAL").textValue
            guard mode?.lowercased() == "wal" else {
                throw SQLiteError(extendedCode: 1, message: "could not switch the new store to WAL", path: path)
            }
        } catch {
            // The file did not exist before: what was made of it goes, rather than a half-made store.
            for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) }
            if let error = error as? SQLiteError { throw .sqlite(error) }
            throw .sqlite(SQLiteError(extendedCode: 1, message: "\(error)", path: path))
        }
        return try LegacyStore(path: path, model: model, options: OpenOptions())
    }

    /// Creates the empty file at `path`, exclusively (`O_EXCL`: never one that exists, not even a dangling
    /// link), so that a failed creation may remove what it made and nothing else.
    static func reserve(_ path: String) throws(LegacyStoreError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard descriptor >= 0 else {
            let reason =
                switch errno {
                case EEXIST: "a file is already there (create never overwrites one)"
                case ENOENT, ENOTDIR: "its folder does not exist"
                case EACCES, EPERM, EROFS: "its folder is not writable"
                default: String(cString: strerror(errno))
                }
            throw .cannotCreate(path: path, reason: reason)
        }
        close(descriptor)
    }

    static func metadataPlist(model: Model, options: Options) -> [UInt8] {
        var dictionary: [String: PropertyListValue] = [
            "NSStoreType": .string("SQLite"),
            "NSPersistenceFrameworkVersion": .integer(Int64(options.frameworkVersion)),
            "NSStoreModelVersionIdentifiers": .array(model.versionIdentifiers.map { .string($0) }),
            "_NSAutoVacuumLevel": .string("2"),
        ]
        if let hashes = options.versionHashes {
            dictionary["NSStoreModelVersionHashes"] = .dictionary(hashes.mapValues { .data($0) })
            dictionary["NSStoreModelVersionHashesVersion"] = .integer(3)
        }
        return BinaryPropertyList.encode(.dictionary(dictionary))
    }

    /// A random (version 4) UUID in Core Data's upper-case form.
    static func randomUUID() -> String {
        let bytes = UUIDText.randomBytes()
        let hex = bytes.map { byte in
            let digits = Array("0123456789ABCDEF")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
        }
        return [hex[0..<4], hex[4..<6], hex[6..<8], hex[8..<10], hex[10..<16]].map { $0.joined() }.joined(
            separator: "-"
        )
    }
}
