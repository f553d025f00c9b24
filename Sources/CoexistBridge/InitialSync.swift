import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import CoexistStore

/// The first run against a file whose data is on one side only (a real Core Data store, say): copy what
/// exists to the other side, in chunks of `initialSyncChunk` objects per write transaction (bounded
/// memory), with progress saved after every chunk so that a restart resumes where it stopped; then follow
/// the history from the token the copy started at (changes made during the copy are mirrored then).
extension SyncEngine {
    /// Progress of an initial sync, for `STATUS=` and logs.
    public struct InitialSyncProgress: Sendable {
        /// `legacy-to-new` or `new-to-legacy`.
        public var direction: String
        /// `objects` or `relationships`.
        public var phase: String
        /// The root entity being copied.
        public var entity: String
        /// Objects of the entity handled so far in this phase.
        public var done: Int
        /// Objects of the entity to handle in this phase.
        public var total: Int
        /// Steps of the whole sync done so far: each object counts once for its copy and once for its
        /// relationships (after a resumed sync, the entity in progress counts from where this run began it).
        public var overallDone: Int
        /// Steps of the whole sync in all: twice the objects to copy.
        public var overallTotal: Int

        /// The share of the whole sync done, 0…1.
        public var fraction: Double { overallTotal > 0 ? Double(overallDone) / Double(overallTotal) : 0 }

        /// `legacy-to-new 40% (objects of Task: 81500 of 200000)`.
        public var summary: String {
            "\(direction) \(Int(fraction * 100))% (\(phase) of \(entity): \(done) of \(total))"
        }
    }

    struct SyncState {
        var direction: String
        var phase: String
        var rootIndex: Int
        var after: Int64

        init?(_ text: String?) {
            let parts = text?.split(separator: ":").map(String.init) ?? []
            guard parts.count == 4, let index = Int(parts[2]), let key = Int64(parts[3]) else { return nil }
            direction = parts[0]
            phase = parts[1]
            rootIndex = index
            after = key
        }

        init(direction: String, phase: String, rootIndex: Int, after: Int64) {
            self.direction = direction
            self.phase = phase
            self.rootIndex = rootIndex
            self.after = after
        }

        var text: String { "\(direction):\(phase):\(rootIndex):\(after)" }
    }

    /// Starts or resumes the initial sync when the bridge has not run yet; returns whether one ran.
    /// `progress` is called after each chunk (each its own committed transaction); an error it throws
    /// stops the sync there, to be resumed from that chunk by the next call.
    @discardableResult
    public func initialSyncIfNeeded(progress: (InitialSyncProgress) throws -> Void = { _ in }) throws -> Bool {
        var state = try connection.write { () throws -> SyncState? in
            if try connection.scalar("SELECT 1 FROM coexist_bridge WHERE id = 1") != .null {
                return SyncState(
                    try connection.scalar("SELECT initial_sync FROM coexist_bridge WHERE id = 1").textValue
                )
            }
            let start = try lastToken()
            let legacyRows = try rowCount(legacy: true)
            let newRows = try rowCount(legacy: false)
            if legacyRows > 0 && newRows > 0 {
                throw BridgeError.bothSidesHaveData(
                    "\(connection.path): both schemas hold data (\(legacyRows) legacy rows, \(newRows) new rows) and the bridge has "
                        + "never run: it cannot tell which side is the truth; empty one side first"
                )
            }
            let direction = legacyRows > 0 ? "legacy-to-new" : (newRows > 0 ? "new-to-legacy" : nil)
            let state = direction.map { SyncState(direction: $0, phase: "objects", rootIndex: 0, after: Int64.min) }
            try connection.run(
                "INSERT INTO coexist_bridge (id, cursor, initial_sync, updated_at) VALUES (1, ?, ?, ?)",
                [.integer(start), state.map { .text($0.text) } ?? .null, .real(TransactionWriter.now())]
            )
            return state
        }
        guard state != nil else { return false }
        let roots = new.model.entities.filter { $0.superentity == nil }
        let legacySource = state?.direction == "legacy-to-new"
        let totals = try roots.map { try count($0, legacy: legacySource) }
        let rows = totals.reduce(0, +)
        var doneInRoot = 0
        while var current = state {
            guard current.rootIndex < roots.count else {
                if current.phase == "objects" {
                    state = SyncState(
                        direction: current.direction,
                        phase: "relationships",
                        rootIndex: 0,
                        after: Int64.min
                    )
                    try saveState(state)
                    continue
                }
                try saveState(nil)
                return true
            }
            let root = roots[current.rootIndex]
            let (handled, last) = try copyChunk(root, current)
            let index = current.rootIndex
            doneInRoot += handled
            let done = min(doneInRoot, totals[index])
            let before = (current.phase == "relationships" ? rows : 0) + totals[..<index].reduce(0, +)
            if handled == 0 {
                current.rootIndex += 1
                current.after = Int64.min
                doneInRoot = 0
            } else {
                current.after = last
            }
            state = current
            try progress(
                InitialSyncProgress(
                    direction: current.direction,
                    phase: current.phase,
                    entity: root.name,
                    done: done,
                    total: totals[index],
                    overallDone: before + done,
                    overallTotal: 2 * rows
                )
            )
        }
        return true
    }

    private func saveState(_ state: SyncState?) throws {
        try connection.run(
            "UPDATE coexist_bridge SET initial_sync = ?, updated_at = ? WHERE id = 1",
            [state.map { .text($0.text) } ?? .null, .real(TransactionWriter.now())]
        )
    }

    /// Copies (or links) one chunk of `root`'s objects after the state's key; saves the progress in the same
    /// transaction. Returns how many objects it handled and the last key.
    private func copyChunk(_ root: Entity, _ state: SyncState) throws -> (Int, Int64) {
        try connection.write {
            let metadata = SaveMetadata(
                author: configuration.author,
                contextName: "initial sync",
                processName: "coexistd"
            )
            var handled = 0
            var last = state.after
            if state.direction == "legacy-to-new" {
                let keys = try chunkKeys(legacyTable: legacy.schema?.entities[root.name]?.table, after: state.after)
                try new.save(metadata) { save in
                    save.enforcesMandatoryValues = false
                    save.recordsValues = false
                    var context = LegacyToNew.Context(engine: self, save: save)
                    for (pk, entity) in keys {
                        let id = ObjectID(entity: entity, pk: pk)
                        if state.phase == "objects" {
                            _ = try context.ensure(id)
                        } else if let (_, ref) = try context.ensure(id),
                            let definition = new.model.entity(named: entity)
                        {
                            for relationship in new.model.allRelationships(of: definition)
                            where !relationship.isTransient {
                                try context.syncRelationship(id, ref, relationship.name)
                            }
                        }
                        handled += 1
                        last = pk
                    }
                }
            } else {
                let keys = try chunkKeys(
                    newTable: new.schema.entities[root.name]?.table,
                    root: root.name,
                    after: state.after
                )
                try legacy.save(metadata) { save in
                    save.enforcesMandatoryValues = false
                    var context = NewToLegacy.Context(engine: self, save: save)
                    for (rowid, ref) in keys {
                        if state.phase == "objects" {
                            _ = try context.ensure(ref)
                        } else if let (_, id) = try context.ensure(ref),
                            let definition = new.model.entity(named: ref.entity)
                        {
                            for relationship in new.model.allRelationships(of: definition)
                            where !relationship.isTransient {
                                try context.syncRelationship(ref, id, relationship.name)
                            }
                        }
                        handled += 1
                        last = rowid
                    }
                }
            }
            var next = state
            next.after = last
            try saveState(handled == 0 ? state : next)
            return (handled, last)
        }
    }

    private func chunkKeys(legacyTable: String?, after: Int64) throws -> [(Int64, String)] {
        guard let legacyTable else { return [] }
        return try connection.rows(
            "SELECT Z_PK, Z_ENT FROM \(SQLIdentifier.quoted(legacyTable)) WHERE Z_PK > ? ORDER BY Z_PK LIMIT ?",
            [.integer(after), .integer(Int64(configuration.initialSyncChunk))]
        ).compactMap { row in
            guard let pk = row[0].integerValue, let number = row[1].integerValue,
                let entity = legacy.schema?.entity(number: Int(number))?.name
            else { return nil }
            return (pk, entity)
        }
    }

    private func chunkKeys(newTable: String?, root: String, after: Int64) throws -> [(Int64, ObjectRef)] {
        guard let newTable, let mapping = new.schema.entities[root] else { return [] }
        let kind = mapping.hasKindColumn ? "\"kind\"" : "NULL"
        return try connection.rows(
            "SELECT rowid, \"id\", \(kind) FROM \(SQLIdentifier.quoted(newTable)) WHERE rowid > ? ORDER BY rowid LIMIT ?",
            [.integer(after), .integer(Int64(configuration.initialSyncChunk))]
        ).compactMap { row in
            guard let rowid = row[0].integerValue, let id = row[1].textValue else { return nil }
            return (rowid, ObjectRef(entity: row[2].textValue ?? root, id: id))
        }
    }

    func rowCount(legacy: Bool) throws -> Int {
        try new.model.entities.filter { $0.superentity == nil }.reduce(0) { $0 + (try count($1, legacy: legacy)) }
    }

    func count(_ root: Entity, legacy isLegacy: Bool) throws -> Int {
        let table = isLegacy ? legacy.schema?.entities[root.name]?.table : new.schema.entities[root.name]?.table
        guard let table, try connection.tableExists(table) else { return 0 }
        return Int(try connection.scalar("SELECT count(*) FROM \(SQLIdentifier.quoted(table))").integerValue ?? 0)
    }
}
