public import CoexistConfiguration
import CoexistHistory
public import CoexistLegacyStore
public import CoexistModel
public import CoexistSQLite
public import CoexistStore

/// The bridge: reads the shared history after its cursor, in token order, and mirrors every transaction
/// not written by itself into the other schema, exactly once.
///
/// One pass mirrors up to `batchSize` transactions in ONE SQLite write transaction: each mirrored write is
/// recorded in the target side's history with the bridge as author (on the legacy side as Core Data
/// history, with `Z_OPT` bumped), `coexist_mirror` records which token it got, and the cursor advances —
/// all committed together or not at all, so a crash at any point followed by a restart neither loses nor
/// repeats a change. The bridge's own transactions are skipped (no echo).
public final class SyncEngine {
    /// Counts of one pass.
    public struct PassResult: Sendable, Equatable {
        /// Source transactions handled (mirrored, skipped as the bridge's own, or parked).
        public var handled: Int = 0
        /// Transactions the pass wrote into the other side.
        public var mirrored: Int = 0
        /// Conflicts detected and resolved by the policy.
        public var conflicts: Int = 0
        /// Source transactions parked (not mirrored, see `coexist_parked`).
        public var parked: Int = 0
        /// Objects the pass inserted set-based (``SetInserts``), counted in ``mirrored``'s transactions.
        public var copied: Int = 0
        /// Updated objects whose attributes the pass compared and wrote set-based (``SetUpdates``).
        public var updatedSetBased: Int = 0
        /// The cursor after the pass.
        public var cursor: Int64 = 0
        /// Nothing was pending when the pass committed: every transaction after the snapshot was the
        /// bridge's own (its mirrors), and the cursor passed them too (no further pass is needed to skip them).
        public var caughtUp = false
    }

    /// The shared connection.
    public let connection: Connection
    /// The legacy store on the connection.
    public let legacy: LegacyStore
    /// The new store on the connection.
    public let new: NewStore
    /// Settings.
    public var configuration: BridgeConfiguration
    let identities: IdentityMap
    /// The model's derived attributes, which the new side gets from the legacy side's triggers.
    let derived: DerivedAttributes

    /// The attributes of `entity` Core Data's triggers or the store's own maintain (derived ones among them):
    /// they may change without a change to the object naming them.
    public func maintainedAttributes(of entity: String) -> [String] { derived.names[entity] ?? [] }
    /// The model's uniqueness constraints, whose moving values a mirror frees first.
    let unique: UniqueValues
    let reader: HistoryReader
    /// Pending transactions read ahead of the cursor (token order), kept across passes: the conflict window.
    var readAhead: [HistoryTransaction] = []
    /// The cursor `readAhead` continues; nil when there is no read-ahead.
    var readAheadCursor: Int64?
    var readAheadChanges = 0
    /// The conflict resolver over `readAhead`; nil when there is no read-ahead.
    var resolver: ConflictResolver?
    /// The conversions of the set-based copies (``SetInserts``), and each entity's copy (nil: none).
    let conversions = MirrorConversions()
    var setCopies: [String: SetInserts.Copy?] = [:]
    /// Objects copied set-based by the running pass.
    var copiedInPass = 0
    /// Objects updated set-based by the running pass.
    var updatedInPass = 0
    /// Where the next round of retrying parked objects starts (root entity, `Z_PK`); nil: at the start.
    var parkedObjectsAfter: (String, Int64)?
    /// Called for every conflict, parked transaction and fallback, for logging.
    public var report: (BridgeNotice) -> Void = { _ in }
    /// Called for every object parked (there can be many at once, a store full of shared ids, say: the
    /// daemon rate-limits these); nil: ``report``.
    public var reportParkedObject: ((BridgeNotice) -> Void)?

    /// Opens the bridge on `connection`: checks the model against the store, creates the new schema and the
    /// bridge's tables when absent.
    ///
    /// - Parameter model: the configured model; nil to use the store's own. When given, it must describe the
    ///   same entities and properties as the store's model, or ``BridgeError/modelMismatch(_:)`` names both.
    ///
    /// With `readOnly`, nothing is created (for `verify` on a read-only connection): a store the bridge never
    /// ran on throws ``BridgeError/notBridged(_:)``.
    public init(
        connection: Connection,
        model: Model?,
        overrides: SchemaOverrides = SchemaOverrides(),
        configuration: BridgeConfiguration = BridgeConfiguration(),
        readOnly: Bool = false
    ) throws {
        self.connection = connection
        self.configuration = configuration
        let stored = try LegacyStore(connection: connection)
        if let model, let storeModel = stored.model {
            let differences = model.structuralDifferences(from: storeModel)
            guard differences.isEmpty else {
                throw BridgeError.modelMismatch(
                    "the model \(model.source) (version \(model.versionIdentifiers.joined(separator: ", "))) does not match the store's "
                        + "model from \(stored.modelSource) (version \(stored.metadata.modelVersionIdentifiers.joined(separator: ", "))): "
                        + differences.prefix(5).joined(separator: "; ")
                )
            }
        }
        guard let resolved = model ?? stored.model else {
            throw BridgeError.modelMismatch("\(connection.path): the store carries no model and none was configured")
        }
        legacy = model == nil ? stored : try LegacyStore(connection: connection, model: resolved)
        new = try NewStore(connection: connection, model: resolved, overrides: overrides)
        let newStore = new
        identities = IdentityMap(connection: connection, model: resolved, schema: newStore.schema)
        derived = DerivedAttributes(model: resolved, maintained: try legacy.triggerMaintainedAttributes())
        unique = UniqueValues(model: resolved)
        if readOnly {
            guard try connection.tableExists("coexist_bridge"), try newStore.schemaExists() else {
                throw BridgeError.notBridged(
                    "\(connection.path): the bridge has never run on this store (no coexist_bridge table or new "
                        + "schema): there is nothing to compare yet; coexistd creates both on its first start (or verify --bootstrap)"
                )
            }
        } else {
            let legacyStore = legacy
            try connection.write {
                try newStore.createSchema()
                try HistoryTables.ensure(connection, tombstones: 0)
                try BridgeTables.create(connection)
                // What the history shows of the to-many slots, kept: pruning will take the evidence away.
                try legacyStore.keepCalibration()
            }
        }
        reader = try HistoryReader(connection: connection, decoder: StoreChangeDecoder(store: legacy))
        try conversions.register(on: connection)
    }

    /// Parked transactions and objects (`coexist_parked`, `coexist_parked_object`).
    public func parkedCount() throws -> Int { try BridgeTables.parkedCount(connection) }

    /// The conflict window holds at most about this many changes per side (and 4,096 transactions), so
    /// that a backlog of large transactions is read in bounded memory; a single larger transaction is read
    /// alone.
    public static let windowChanges = 20_000
    static let windowTransactions = 4_096
    /// A pass takes transactions while their changes stay within this many (and at least one transaction):
    /// the write lock is released, the apps' writers get their turn, subscribers get the mirrors, and a stop
    /// or reload is seen, however large the backlog.
    public static let passChanges = 4_000

    /// Mirrors a snapshot of up to `batchSize` pending transactions (fewer past ``passChanges`` changes) in
    /// one write transaction.
    ///
    /// The snapshot's transactions of each side are mirrored in ONE save that makes every object they touched
    /// equal to its state as of the last of them (``LegacyToNew``, ``NewToLegacy``), so the target only
    /// passes through states the source had: when the pass reaches the last token, a constraint the source
    /// satisfies cannot fail in the target. Every source token of the snapshot gets its `coexist_mirror` row
    /// (the save's token). Should the snapshot fail as a whole, the pass is rolled back and run again one
    /// transaction at a time (each in its own savepoint), so that only the one at fault is parked.
    public func pass() throws -> PassResult {
        do {
            return try connection.write { try passInTransaction(oneByOne: false) }
        } catch let failure as SnapshotFailed {
            // Rolled back whole (no savepoint spans a snapshot: SQLite would keep a copy of every page each of
            // its statements changed until the end); the same transactions again, one at a time.
            dropReadAhead()
            report(
                BridgeNotice(
                    .fallback,
                    "a snapshot could not be mirrored whole, mirroring it one transaction at a time: \(failure.error)"
                )
            )
            do {
                return try connection.write { try passInTransaction(oneByOne: true) }
            } catch {
                dropReadAhead()
                throw error
            }
        } catch {
            // What the failed pass learnt (identities, conflicts) was rolled back: forget it too.
            dropReadAhead()
            throw error
        }
    }

    /// A snapshot failed for a reason of its own (not the database's): its pass is rolled back and run
    /// again one transaction at a time.
    struct SnapshotFailed: Error {
        let error: any Error
    }

    private func passInTransaction(oneByOne: Bool) throws -> PassResult {
        var result = PassResult()
        let cursor = try cursor() ?? 0
        let (window, conflicts) = try window(after: cursor)
        result.cursor = cursor
        var snapshot: [HistoryTransaction] = []
        var changes = 0
        for transaction in window.prefix(configuration.batchSize) {
            changes += transaction.changes.count
            if !snapshot.isEmpty && changes > Self.passChanges { break }
            snapshot.append(transaction)
        }
        guard let last = snapshot.last else { return result }
        result.handled = snapshot.count
        result.cursor = last.token
        let foreign = snapshot.filter { $0.author != configuration.author }
        copiedInPass = 0
        updatedInPass = 0
        if oneByOne {
            try mirrorOneByOne(foreign, conflicts: conflicts, into: &result)
        } else {
            do {
                result.mirrored = try mirrorSnapshot(foreign, conflicts: conflicts)
                try checkForeignKeys()
            } catch {
                if Self.isTransient(error) || Self.isCorruption(error) { throw error }
                throw SnapshotFailed(error: error)
            }
        }
        result.copied = copiedInPass
        result.updatedSetBased = updatedInPass
        result.conflicts = try conflicts.record()
        if let past = try lastOwnToken(after: last.token) {
            result.cursor = past
            result.caughtUp = true
        }
        try setCursor(result.cursor)
        return result
    }

    /// Mirrors each side's transactions of `snapshot` in one save (the side with the earlier token first);
    /// returns how many source transactions got a mirror.
    private func mirrorSnapshot(_ snapshot: [HistoryTransaction], conflicts: ConflictResolver) throws -> Int {
        var sides: [Side] = []
        for transaction in snapshot where !sides.contains(transaction.side) { sides.append(transaction.side) }
        var mirrored = 0
        for side in sides {
            let transactions = snapshot.filter { $0.side == side }
            guard let first = transactions.first, let last = transactions.last,
                let token = try mirror(
                    transactions,
                    conflicts: conflicts,
                    name: Self.saveName(first, last),
                    setBased: true
                )
            else { continue }
            for transaction in transactions { try recordMirror(transaction, token: token) }
            mirrored += transactions.count
        }
        return mirrored
    }

    /// The pass after its snapshot failed: each transaction in its own savepoint, the one at fault parked.
    private func mirrorOneByOne(
        _ transactions: [HistoryTransaction],
        conflicts: ConflictResolver,
        into result: inout PassResult
    ) throws {
        for transaction in transactions {
            do {
                let mirrored = try connection.savepoint("coexist_mirror") {
                    let token = try mirror(
                        [transaction],
                        conflicts: conflicts,
                        name: Self.saveName(transaction, transaction)
                    )
                    try checkForeignKeys()
                    return token
                }
                if let mirrored {
                    try recordMirror(transaction, token: mirrored)
                    result.mirrored += 1
                }
            } catch {
                // Busy, I/O error, disk full: nothing advances; the caller retries the whole pass. A damaged
                // file is never a reason to park a transaction: the caller stops.
                if Self.isTransient(error) || Self.isCorruption(error) { throw error }
                try park(transaction.token, side: transaction.side, error: "\(error)")
                result.parked += 1
                var notice = BridgeNotice(
                    .parkedTransaction,
                    "transaction \(transaction.token) (\(transaction.side)) parked: \(error)"
                )
                notice.token = transaction.token
                notice.side = transaction.side
                report(notice)
            }
        }
    }

    /// Fails when what the savepoint wrote leaves a reference to a row that does not exist: the pass's COMMIT
    /// would fail on it (the new schema's foreign keys are deferred), and fail again on every retry.
    func checkForeignKeys() throws {
        guard connection.hasDeferredForeignKeyViolations else { return }
        throw BridgeError.unmirrorable("it would leave a reference to an object the new schema does not hold")
    }

    func recordMirror(_ transaction: HistoryTransaction, token: Int64) throws {
        try connection.run(
            "INSERT INTO coexist_mirror (source_token, source_side, mirror_token) VALUES (?, ?, ?)",
            [.integer(transaction.token), .text(transaction.side.rawValue), .integer(token)]
        )
    }

    static func saveName(_ first: HistoryTransaction, _ last: HistoryTransaction) -> String {
        first.token == last.token ? "mirror of \(first.token)" : "mirror of \(first.token)...\(last.token)"
    }

    /// Runs passes until nothing is pending, calling `afterEachPass` after each; returns the totals.
    public func catchUp(afterEachPass: (PassResult) throws -> Void = { _ in }) throws -> PassResult {
        var total = PassResult()
        while true {
            let result = try pass()
            try afterEachPass(result)
            total.handled += result.handled
            total.mirrored += result.mirrored
            total.conflicts += result.conflicts
            total.parked += result.parked
            total.copied += result.copied
            total.updatedSetBased += result.updatedSetBased
            total.cursor = result.cursor
            if result.handled == 0 || result.caughtUp { return total }
        }
    }

    /// Who the bridge's own saves are: its author (never mirrored back), its bundle identifier, `coexistd`.
    func bridgeMetadata(contextName: String) -> SaveMetadata {
        SaveMetadata(
            author: configuration.author,
            contextName: contextName,
            bundleID: configuration.bundleID ?? configuration.author,
            processName: "coexistd"
        )
    }

    /// Mirrors `transactions` (one side's, in token order) in one save of the other side; the save's token,
    /// nil when nothing needed writing. `setBased`: legacy inserts are copied set-based where they can be
    /// (``SetInserts``; a snapshot's, not one transaction at a time after a snapshot failed, whose errors
    /// must be the object path's).
    func mirror(
        _ transactions: [HistoryTransaction],
        conflicts: ConflictResolver,
        name: String,
        setBased: Bool = false
    ) throws -> Int64? {
        guard let side = transactions.first?.side else { return nil }
        let metadata = bridgeMetadata(contextName: name)
        switch side {
        case .legacy:
            return try LegacyToNew(engine: self, conflicts: conflicts, setBased: setBased).mirror(
                transactions,
                metadata
            )
        case .new: return try NewToLegacy(engine: self, conflicts: conflicts).mirror(transactions, metadata)
        }
    }
}
