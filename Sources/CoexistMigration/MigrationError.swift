/// Why a migration was refused or failed; each case names the store. Nothing was changed in any case.
public enum MigrationError: Error, Sendable, CustomStringConvertible {
    /// The store's model matches no version of the `.xcdatamodeld`.
    case unknownVersion(path: String, detail: String)
    /// `--to` names no version, or one older than the store's.
    case badTarget(path: String, detail: String)
    /// Core Data could not infer the step and nothing covers it.
    case notInferable(path: String, from: String, to: String, reasons: [String])
    /// A step whose mapping model names a custom entity migration policy (code) no Swift stage stands in for.
    case customPolicy(path: String, step: String, policy: String)
    /// A change coexist cannot carry out yet, with what it is.
    case unsupported(path: String, step: String, detail: String)
    /// The bridge has not mirrored everything, or holds parked work: migrating would strand it.
    case bridgeNotCaughtUp(path: String, detail: String)
    /// A check at the end of the transaction failed (the transaction was rolled back).
    case checkFailed(path: String, detail: String)
    /// A failure after the backup was made: everything was rolled back, the store is as it was, and the
    /// backup is kept at `backup`.
    case rolledBack(path: String, backup: String, underlying: any Error)
    /// The failure injected by the test hook `COEXIST_MIGRATION_FAIL_AT` after step `step`.
    case injected(path: String, step: Int)

    public var description: String {
        switch self {
        case .unknownVersion(let path, let detail):
            "\(path): cannot tell which model version the store is at: \(detail)"
        case .badTarget(let path, let detail): "\(path): \(detail)"
        case .notInferable(let path, let from, let to, let reasons):
            "\(path): the step \(from) → \(to) cannot be inferred (lightweight) and no mapping model or custom "
                + "stage covers it: " + reasons.joined(separator: "; ")
        case .customPolicy(let path, let step, let policy):
            "\(path): step \(step): its mapping model names the custom migration policy \(policy), which is code: "
                + "no Swift stage is registered for it"
        case .unsupported(let path, let step, let detail): "\(path): step \(step): not supported yet: \(detail)"
        case .bridgeNotCaughtUp(let path, let detail): "\(path): \(detail)"
        case .checkFailed(let path, let detail): "\(path): the migrated store fails a check (rolled back): \(detail)"
        case .injected(let path, let step): "\(path): failure injected after step \(step) (rolled back)"
        case .rolledBack(_, let backup, let underlying):
            "\(underlying) — rolled back: the store is as it was; the backup made before is kept at \(backup)"
        }
    }
}
