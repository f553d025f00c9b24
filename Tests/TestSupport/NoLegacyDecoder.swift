public import CoexistHistory
public import CoexistSQLite

/// For tests of the new side only: legacy changes are not decoded (their entity is unknown).
public struct NoLegacyDecoder: LegacyChangeDecoding {
    public init() {}

    public func decode(
        token: Int64,
        entityNumber: Int,
        type: ChangeType,
        columns: [UInt8]?,
        tombstones: [SQLiteValue]
    ) -> LegacyChangeDetails {
        LegacyChangeDetails(entity: nil, properties: nil, tombstone: [:])
    }
}
