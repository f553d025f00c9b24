import CoexistModel

extension StoreMetadata {
    /// `NSStoreModelVersionHashesDigest` of `hashes`, as Core Data writes it: the base64 SHA-512 of every
    /// entity name's UTF-8 bytes followed by its hash, in byte order of the names.
    ///
    /// [Observed] equal to the digest of CoreDataPlus SampleModel V1 and V2, SampleModel2 V1 and Photos 26.1
    /// (75 entities); Moody (framework 637) has none.
    public static func hashesDigest(_ hashes: [String: [UInt8]]) -> String {
        var message: [UInt8] = []
        for name in hashes.keys.sorted(by: { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }) {
            message += Array(name.utf8)
            message += hashes[name] ?? []
        }
        return Base64.encode(SHA512.digest(message))
    }

    /// The `Z_PLIST` of a store moved to another model version: every other key kept as it was,
    /// `NSStoreModelVersionIdentifiers` set to `versionIdentifiers`, and the version hashes set to `hashes`
    /// (from a compiled `VersionInfo.plist`), with the digest recomputed when the store had one. Without
    /// `hashes`, the old hashes, digest and checksum are removed: they would describe the old version, and
    /// new ones are never invented.
    ///
    /// Throws when `bytes` is not a binary plist dictionary; `path` names the store in the error.
    public static func migratedPlist(
        _ bytes: [UInt8],
        versionIdentifiers: [String],
        hashes: [String: [UInt8]]?,
        path: String
    ) throws(LegacyStoreError) -> [UInt8] {
        let decoded: PropertyListValue
        do {
            decoded = try BinaryPropertyList.decode(bytes)
        } catch {
            throw .invalidData(path: path, detail: "Z_METADATA.Z_PLIST: \(error.message)")
        }
        guard var dictionary = decoded.dictionary else {
            throw .invalidData(path: path, detail: "Z_METADATA.Z_PLIST is not a dictionary")
        }
        dictionary["NSStoreModelVersionIdentifiers"] = .array(versionIdentifiers.map { .string($0) })
        dictionary["NSStoreModelVersionChecksumKey"] = nil
        if let hashes {
            let hadDigest = dictionary["NSStoreModelVersionHashesDigest"] != nil
            dictionary["NSStoreModelVersionHashes"] = .dictionary(hashes.mapValues { .data($0) })
            dictionary["NSStoreModelVersionHashesVersion"] = .integer(3)
            dictionary["NSStoreModelVersionHashesDigest"] = hadDigest ? .string(hashesDigest(hashes)) : nil
        } else {
            for key in [
                "NSStoreModelVersionHashes", "NSStoreModelVersionHashesDigest", "NSStoreModelVersionHashesVersion",
            ] {
                dictionary[key] = nil
            }
        }
        return BinaryPropertyList.encode(.dictionary(dictionary))
    }
}
