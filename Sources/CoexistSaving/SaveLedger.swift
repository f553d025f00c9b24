public import CoexistSQLite

/// The bookkeeping one save keeps while it runs, the same for both schemas' saves: the objects it changed
/// in the order of their first change, each one's pending change (`Entry`, a format's own), and the objects
/// it deleted. Each of the save's operations runs through ``atomically(on:refusal:begin:undo:end:_:)``: in an
/// SQLite savepoint, and when it fails the ledger is put back as it was before the operation, so a caller
/// who catches the error carries on with a consistent save. Nested operations (an `add` that sets the
/// inverse to-one) share the outermost one's savepoint.
///
/// The ledger is restored from a journal of what the operation changed (each object's entry before its
/// first change in the operation), not from a copy of it all: an operation costs what it touches, however
/// large the save.
public final class SaveLedger<ID: Hashable, Entry> {
    /// The objects with a pending change, in the order of their first change.
    public var order: [ID] { orderStorage }
    /// Each object's pending change.
    public var pending: [ID: Entry] { pendingStorage }
    /// The objects deleted in this save (inserted-then-deleted ones included).
    public var deleted: Set<ID> { deletedStorage }
    // The bookkeeping is inlinable, so that each save format's ledger is specialized for its own types (a
    // generic call per change cost 15,000 instructions in a mirror, `coexist-bench throughput` under
    // callgrind): its state is usable from inlined code for that, and changed only here. Public, not
    // package: the package-level inlinable bodies were not specialized where they were used (measured), and
    // this module is no product: its users are the package's own stores.
    @usableFromInline var orderStorage: [ID] = []
    @usableFromInline var pendingStorage: [ID: Entry] = [:]
    @usableFromInline var deletedStorage: Set<ID> = []
    /// Whether the save is over: no operation runs any more.
    public private(set) var isFinished = false

    private var depth = 0
    @usableFromInline var journal: Journal?

    @usableFromInline
    struct Journal {
        @usableFromInline var pending: [ID: Entry?] = [:]
        @usableFromInline var deleted: [ID: Bool] = [:]
        /// How many objects ``SaveLedger/order`` held before the operation (it only appends, except for
        /// ``forget(_:)``, which keeps the whole order first).
        var orderCount: Int
        @usableFromInline var order: [ID]?
    }

    /// An empty ledger.
    public init() {}

    /// Records `entry` as the pending change of `id`, placing `id` last in the order if it had none.
    @inlinable
    public func record(_ id: ID, _ entry: Entry) {
        let previous = pendingStorage[id]
        if journal != nil, journal?.pending.index(forKey: id) == nil { journal?.pending[id] = .some(previous) }
        if previous == nil { orderStorage.append(id) }
        pendingStorage[id] = entry
    }

    /// Forgets the pending change of `id` and its place in the order (an object inserted, then deleted).
    @inlinable
    public func forget(_ id: ID) {
        guard pendingStorage[id] != nil else { return }
        if journal != nil, journal?.pending.index(forKey: id) == nil {
            journal?.pending[id] = .some(pendingStorage[id])
        }
        if journal != nil, journal?.order == nil { journal?.order = orderStorage }
        pendingStorage[id] = nil
        orderStorage.removeAll { $0 == id }
    }

    /// Marks `id` deleted in this save.
    @inlinable
    public func markDeleted(_ id: ID) {
        if journal != nil, journal?.deleted[id] == nil { journal?.deleted[id] = deletedStorage.contains(id) }
        deletedStorage.insert(id)
    }

    /// Ends the save: operations are refused from now on.
    public func finish() { isFinished = true }

    /// Runs one operation of the save atomically, in a savepoint on `connection`; refused (with
    /// `refusal()`) once the save is over or outside its transaction. The format's own state follows the
    /// operation through `begin` (before it), `undo` (when it failed, after the ledger is restored) and
    /// `end` (after it, in every case); none is called for a nested operation.
    public func atomically<T>(
        on connection: Connection,
        refusal: () -> any Error,
        begin: () -> Void = {},
        undo: () -> Void = {},
        end: () -> Void = {},
        _ body: () throws -> T
    ) throws -> T {
        guard !isFinished, !connection.isAutocommit else { throw refusal() }
        if depth > 0 { return try body() }
        depth += 1
        journal = Journal(orderCount: orderStorage.count)
        begin()
        defer {
            depth -= 1
            journal = nil
            end()
        }
        do {
            return try connection.savepoint("coexist_operation", body)
        } catch {
            if let journal { restore(journal) }
            undo()
            throw error
        }
    }

    private func restore(_ journal: Journal) {
        for (id, value) in journal.pending { pendingStorage[id] = value }
        for (id, held) in journal.deleted {
            if held { deletedStorage.insert(id) } else { deletedStorage.remove(id) }
        }
        orderStorage = Array((journal.order ?? order).prefix(journal.orderCount))
    }
}
