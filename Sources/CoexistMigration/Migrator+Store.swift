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
    /// Refuses while the bridge is behind (its cursor before the last token), mid initial sync, or holds
    /// parked work: what it has not mirrored was written under the old version.
    static func checkBridge(_ connection: Connection, path: String) throws {
        if try connection.tableExists("coexist_parked") {
            let parked =
                try connection.scalar(
                    "SELECT (SELECT count(*) FROM coexist_parked) + (SELECT count(*) FROM coexist_parked_object)"
                ).integerValue ?? 0
            guard parked == 0 else {
                throw MigrationError.bridgeNotCaughtUp(
                    path: path,
                    detail:
                        "the bridge holds \(parked) parked transactions or objects: settle them first (coexistctl parked)"
                )
            }
        }
        guard try connection.tableExists("coexist_bridge") else { return }
        let row = try connection.rows("SELECT cursor, initial_sync FROM coexist_bridge WHERE id = 1").first
        let cursor = row?[0].integerValue ?? 0
        let last =
            try connection.tableExists("ATRANSACTION")
            ? try connection.scalar("SELECT ifnull(max(Z_PK), 0) FROM ATRANSACTION").integerValue ?? 0 : 0
        guard row?[1] == SQLiteValue.null || row == nil, cursor >= last else {
            throw MigrationError.bridgeNotCaughtUp(
                path: path,
                detail: "the bridge has mirrored up to token \(cursor) of \(last)"
                    + (row?[1] != SQLiteValue.null ? " (its initial sync is not finished)" : "")
                    + ": let coexistd catch up (coexistctl wait), stop it, then migrate"
            )
        }
    }

    /// `Z_METADATA` (version identifiers and hashes), `Z_MODELCACHE` emptied, `coexist_model` replaced.
    static func storeStatements(
        _ connection: Connection,
        model: Model,
        hashes: [String: [UInt8]]?
    ) throws -> [MigrationStatement] {
        guard
            let row = try connection.rows("SELECT Z_VERSION, Z_PLIST FROM Z_METADATA ORDER BY Z_VERSION LIMIT 1").first,
            let bytes = row[1].blobValue
        else {
            throw LegacyStoreError.notCoreDataStore(path: connection.path, reason: "Z_METADATA has no plist")
        }
        let plist = try StoreMetadata.migratedPlist(
            bytes,
            versionIdentifiers: model.versionIdentifiers,
            hashes: hashes,
            path: connection.path
        )
        var result = [
            MigrationStatement("UPDATE Z_METADATA SET Z_PLIST = ? WHERE Z_VERSION = ?", [.blob(plist), row[0]])
        ]
        if try connection.tableExists("Z_MODELCACHE") { result.append(MigrationStatement("DELETE FROM Z_MODELCACHE")) }
        result += try LegacyStore.storedModelStatements(model).map { MigrationStatement($0.sql, $0.arguments) }
        return result
    }

    /// `foreign_key_check` empty and `integrity_check` "ok", inside the transaction.
    static func check(_ connection: Connection) throws {
        let violations = try connection.rows("PRAGMA foreign_key_check")
        guard violations.isEmpty else {
            let first = violations.prefix(3).map { row in
                "\(row[0].textValue ?? "?") row \(row[1].integerValue ?? 0) → \(row[2].textValue ?? "?")"
            }
            throw MigrationError.checkFailed(
                path: connection.path,
                detail: "\(violations.count) foreign key violations (" + first.joined(separator: "; ") + ")"
            )
        }
        let integrity = try connection.rows("PRAGMA integrity_check").compactMap { $0[0].textValue }
        guard integrity == ["ok"] else {
            throw MigrationError.checkFailed(
                path: connection.path,
                detail: "integrity_check: " + integrity.prefix(3).joined(separator: "; ")
            )
        }
    }
}
