import CoexistHistory
public import CoexistLegacyStore
public import CoexistModel
import CoexistSQLite
import CoexistStore
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

extension Migrator {
    /// The store's version and the target's, as indexes into `versions`.
    static func range(
        _ connection: Connection,
        path: String,
        versions: [XCDataModelReader.Version],
        target: String?
    ) throws -> (Int, Int) {
        let store = try LegacyStore(connection: connection)
        guard let model = store.model else {
            throw MigrationError.unknownVersion(
                path: path,
                detail: "the store carries no model (no Z_MODELCACHE, no coexist_model)"
            )
        }
        guard
            let version = XCDataModelReader.Version.matching(
                model,
                identifiers: store.metadata.modelVersionIdentifiers,
                in: versions
            ), let from = versions.firstIndex(where: { $0.name == version.name })
        else {
            throw MigrationError.unknownVersion(
                path: path,
                detail: "its model is none of the versions \(versions.map(\.name).joined(separator: ", "))"
            )
        }
        let name = target ?? versions.first(where: \.isCurrent)?.name ?? versions.last?.name ?? ""
        guard let to = versions.firstIndex(where: { $0.name == name }) else {
            throw MigrationError.badTarget(
                path: path,
                detail: "no version \(name) (versions: \(versions.map(\.name).joined(separator: ", ")))"
            )
        }
        guard to >= from else {
            throw MigrationError.badTarget(
                path: path,
                detail: "the store is at \(versions[from].name), later than \(name): migrations only go forward"
            )
        }
        return (from, to)
    }

    /// Why `configured` (the current version of the `.xcdatamodeld` at `modelPath`) does not fit the store
    /// `store`, in version terms: the store's version, older or newer, and for an older one the exact
    /// `coexistctl migrate` command (`command`: how to name the store and model to it). Nil when the model
    /// is not an `.xcdatamodeld`, the store carries no model, or its model is none of the versions.
    public static func versionMismatch(store: LegacyStore, modelPath: String, command: String) -> String? {
        versionGap(store: store, modelPath: modelPath, command: command)?.message
    }

    /// ``versionMismatch(store:modelPath:command:)`` with whether the store is the older one.
    public static func versionGap(
        store: LegacyStore,
        modelPath: String,
        command: String
    ) -> (older: Bool, message: String)? {
        guard modelPath.hasSuffix(".xcdatamodeld") || modelPath.hasSuffix(".xcdatamodeld/"),
            let storeModel = store.model,
            let versions = try? XCDataModelReader.readVersions(path: modelPath),
            let found = XCDataModelReader.Version.matching(
                storeModel,
                identifiers: store.metadata.modelVersionIdentifiers,
                in: versions
            ),
            let at = versions.firstIndex(where: { $0.name == found.name }),
            let current = versions.firstIndex(where: \.isCurrent), at != current
        else { return nil }
        func named(_ version: XCDataModelReader.Version) -> String {
            let identifiers = version.model.versionIdentifiers.joined(separator: ", ")
            return identifiers.isEmpty ? version.name : "\(version.name) (\(identifiers))"
        }
        let versionsSaid = "\(store.path) is at model version \(named(found)), "
        guard at < current else {
            return (
                false,
                versionsSaid + "newer than the configured \(named(versions[current])): configure the app's newer model"
            )
        }
        return (
            true, versionsSaid + "older than the configured \(named(versions[current])): migrate it first: \(command)"
        )
    }

    /// The compiled model's `VersionInfo.plist` beside an `.xcdatamodeld` (`<name>.momd/VersionInfo.plist`
    /// in the same folder), nil when there is none.
    public static func versionInfo(beside model: String) throws -> VersionInfo? {
        let trimmed = model.hasSuffix("/") ? String(model.dropLast()) : model
        let beside = String(trimmed.dropLast(".xcdatamodeld".count)) + ".momd/VersionInfo.plist"
        guard access(beside, R_OK) == 0 else { return nil }
        return try VersionInfo.read(path: beside)
    }

    /// The mapping models Xcode leaves beside an `.xcdatamodeld` for its steps (`<from>-<to>.xcmappingmodel`
    /// in the same folder), by step (`"<from>→<to>"`).
    public static func mappingModels(beside model: String, versions: [XCDataModelReader.Version]) -> [String: String] {
        let trimmed = model.hasSuffix("/") ? String(model.dropLast()) : model
        let folder = trimmed.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        var result: [String: String] = [:]
        for (from, to) in zip(versions, versions.dropFirst()) {
            let path = (folder.isEmpty ? "." : folder) + "/\(from.name)-\(to.name).xcmappingmodel"
            if access(path, F_OK) == 0 { result[from.name + "→" + to.name] = path }
        }
        return result
    }

    /// The step a mapping model given by path is for (`"<from>→<to>"`): the version names Xcode recorded in it
    /// (`…/Moody 2.xcdatamodel` → `Moody 2`), else its folder's name (`<from>-<to>.xcmappingmodel`), checked
    /// against `versions`. Throws ``MigrationError/badTarget(path:detail:)`` when neither names a step.
    public static func mappingModelStep(_ path: String, versions: [XCDataModelReader.Version]) throws -> String {
        let model = try MappingModelReader.read(path: path)
        func version(_ recorded: String?) -> String? {
            guard let last = recorded?.split(separator: "/").last, last.hasSuffix(".xcdatamodel") else { return nil }
            return String(last.dropLast(".xcdatamodel".count))
        }
        let steps = zip(versions, versions.dropFirst()).map { ($0.name, $1.name) }
        if let from = version(model.sourceModelPath), let to = version(model.destinationModelPath),
            steps.contains(where: { $0 == (from, to) })
        {
            return from + "→" + to
        }
        let folder = path.split(separator: "/").last.map(String.init) ?? path
        for (from, to) in steps where folder == "\(from)-\(to).xcmappingmodel" { return from + "→" + to }
        throw MigrationError.badTarget(
            path: path,
            detail:
                "this mapping model is for none of the steps (\(steps.map { "\($0) → \($1)" }.joined(separator: ", ")))"
        )
    }
}
