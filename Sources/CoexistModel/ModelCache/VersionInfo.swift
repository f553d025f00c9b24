/// A compiled model's `VersionInfo.plist` (`*.momd/VersionInfo.plist`): the entity version hashes Core
/// Data records in a store's `NSStoreModelVersionHashes` (coredata-sqlite-format.md §2.2).
///
/// The hashes cannot be computed from the model XML (Apple's algorithm is not public); this is the only
/// faithful source besides an existing store.
public struct VersionInfo: Sendable {
    /// Version name → entity name → 32-byte hash.
    public var hashes: [String: [String: [UInt8]]]
    /// `NSManagedObjectModel_CurrentVersionName`.
    public var currentVersionName: String?

    /// Reads a binary or XML-free `VersionInfo.plist` (binary form, as Xcode writes it).
    public static func read(path: String) throws(ModelError) -> VersionInfo {
        let plist: PropertyListValue
        do {
            plist = try BinaryPropertyList.decode(try FileBytes.read(path))
        } catch let error as ModelError {
            throw error
        } catch {
            throw ModelError(file: path, message: "not a binary property list")
        }
        guard let root = plist.dictionary, let versions = root["NSManagedObjectModel_VersionHashes"]?.dictionary else {
            throw ModelError(file: path, message: "no NSManagedObjectModel_VersionHashes dictionary")
        }
        var hashes: [String: [String: [UInt8]]] = [:]
        for (version, entities) in versions {
            for (entity, value) in entities.dictionary ?? [:] {
                guard let bytes = value.data else {
                    throw ModelError(file: path, entity: entity, message: "version \(version): hash is not data")
                }
                hashes[version, default: [:]][entity] = bytes
            }
        }
        return VersionInfo(hashes: hashes, currentVersionName: root["NSManagedObjectModel_CurrentVersionName"]?.string)
    }

    /// The hashes of the current version.
    public func currentHashes() throws(ModelError) -> [String: [UInt8]] {
        guard let name = currentVersionName, let result = hashes[name] else {
            throw ModelError(
                file: "VersionInfo.plist",
                message: "no hashes for the current version \(currentVersionName ?? "(unnamed)")"
            )
        }
        return result
    }
}
