import CoexistModel
public import CoexistSQLite

/// The store's `Z_METADATA` row: its UUID and the binary plist of metadata keys (§2.2).
public struct StoreMetadata: Sendable, Codable {
    /// `Z_VERSION` (1 in every store seen).
    public var version: Int
    /// `Z_UUID`: the store identifier (`NSStoreUUIDKey`).
    public var storeUUID: String
    /// `NSStoreType` (`SQLite`).
    public var storeType: String?
    /// `NSPersistenceFrameworkVersion`: the Core Data build that last wrote the store (637 … 1522).
    public var frameworkVersion: Int?
    /// `NSStoreModelVersionIdentifiers`.
    public var modelVersionIdentifiers: [String]
    /// The entity names in `NSStoreModelVersionHashes` (the hashes themselves are Apple's, never invented).
    public var hashedEntityNames: [String]
    /// Every top-level key of the plist, sorted.
    public var keys: [String]

    /// Reads the single `Z_METADATA` row.
    public static func read(_ connection: Connection) throws(LegacyStoreError) -> StoreMetadata {
        let rows: [[SQLiteValue]]
        do {
            rows = try connection.rows("SELECT Z_VERSION, Z_UUID, Z_PLIST FROM Z_METADATA ORDER BY Z_VERSION LIMIT 1")
        } catch {
            throw .sqlite(error)
        }
        guard let row = rows.first else {
            throw .notCoreDataStore(path: connection.path, reason: "Z_METADATA has no row")
        }
        var metadata = StoreMetadata(
            version: Int(row[0].integerValue ?? 0),
            storeUUID: row[1].textValue ?? "",
            storeType: nil,
            frameworkVersion: nil,
            modelVersionIdentifiers: [],
            hashedEntityNames: [],
            keys: []
        )
        guard let bytes = row[2].blobValue else { return metadata }
        let plist: PropertyListValue
        do {
            plist = try BinaryPropertyList.decode(bytes)
        } catch {
            throw .invalidData(path: connection.path, detail: "Z_METADATA.Z_PLIST: \(error.message)")
        }
        guard let dictionary = plist.dictionary else {
            throw .invalidData(path: connection.path, detail: "Z_METADATA.Z_PLIST is not a dictionary")
        }
        metadata.keys = dictionary.keys.sorted()
        metadata.storeType = dictionary["NSStoreType"]?.string
        metadata.frameworkVersion = dictionary["NSPersistenceFrameworkVersion"]?.integer.map { Int($0) }
        metadata.modelVersionIdentifiers = (dictionary["NSStoreModelVersionIdentifiers"]?.array ?? []).compactMap(
            \.string
        )
        metadata.hashedEntityNames =
            (dictionary["NSStoreModelVersionHashes"]?.dictionary?.keys).map { $0.sorted() } ?? []
        return metadata
    }
}
