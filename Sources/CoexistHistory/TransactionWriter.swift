public import CoexistSQLite

#if canImport(Glibc)
import Glibc
#endif

/// Who saves: the strings Core Data records with each history transaction (§4.2), interned in
/// `ATRANSACTIONSTRING`.
public struct SaveMetadata: Sendable, Hashable {
    /// `transactionAuthor`: coexist's bridge uses its own author so it can skip its own transactions.
    public var author: String?
    /// The context's name.
    public var contextName: String?
    /// The bundle identifier; nil records the author's, else the process name (Core Data never leaves
    /// `ZBUNDLEIDTS` empty).
    public var bundleID: String?
    /// The process name (Core Data records a name, not a pid).
    public var processName: String?

    /// Creates metadata.
    public init(author: String? = nil, contextName: String? = nil, bundleID: String? = nil, processName: String? = nil)
    {
        self.author = author
        self.contextName = contextName
        self.bundleID = bundleID
        self.processName = processName
    }
}

/// Writes `ATRANSACTION` rows as Core Data does (§4, checklist §8.6): key from `Z_PRIMARYKEY` 16002,
/// `Z_ENT` 16002, `Z_OPT` NULL, strings interned in `ATRANSACTIONSTRING` (keys from 16003) and referenced
/// through the `…TS` columns only.
///
/// Both stores use it, so one sequence of tokens covers saves on either side.
public struct TransactionWriter {
    /// Core Data's entity numbers for its history tables (§4.7).
    public static let changeEntity = 16001
    public static let transactionEntity = 16002
    public static let stringEntity = 16003

    let connection: Connection
    let keys: KeyAllocator

    /// A writer that allocates keys from `keys`, inside the caller's write transaction.
    public init(connection: Connection, keys: KeyAllocator) {
        self.connection = connection
        self.keys = keys
    }

    /// Writes one transaction row and returns its token.
    public func writeTransaction(_ metadata: SaveMetadata, timestamp: Double) throws -> Int64 {
        let author = try intern(metadata.author)
        let bundle = try intern(metadata.bundleID ?? metadata.author ?? metadata.processName ?? "coexist")
        let context = try intern(metadata.contextName)
        let process = try intern(metadata.processName)
        let token = try keys.allocate(entity: Self.transactionEntity, table: "ATRANSACTION")
        try connection.run(
            """
            INSERT INTO ATRANSACTION (Z_PK, Z_ENT, Z_OPT, ZAUTHORTS, ZBUNDLEIDTS, ZCONTEXTNAMETS, ZPROCESSIDTS, ZTIMESTAMP)
            VALUES (?, \(Self.transactionEntity), NULL, ?, ?, ?, ?, ?)
            """,
            [.integer(token), author, bundle, context, process, .real(timestamp)]
        )
        return token
    }

    /// The `ATRANSACTIONSTRING` key of `text`, inserting it when new; `.null` for nil.
    public func intern(_ text: String?) throws -> SQLiteValue {
        guard let text else { return .null }
        let existing = try connection.scalar("SELECT Z_PK FROM ATRANSACTIONSTRING WHERE ZNAME = ?", [.text(text)])
        if existing != .null { return existing }
        let key = try keys.allocate(entity: Self.stringEntity, table: "ATRANSACTIONSTRING")
        try connection.run(
            "INSERT INTO ATRANSACTIONSTRING (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (?, \(Self.stringEntity), NULL, ?)",
            [.integer(key), .text(text)]
        )
        return .integer(key)
    }

    /// Now, in seconds since 2001-01-01 UTC.
    public static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9 - 978_307_200
    }
}
