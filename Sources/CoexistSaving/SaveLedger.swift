package import CoexistSQLite

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
package final class SaveLedger<ID: Hashable, Entry> {
    /// The objects with a pending change, in the order of their first change.
    package private(set) var order: [ID] = []
    /// Each object's pending change.
    package private(set) var pending: [ID: Entry] = [:]
    /// The objects deleted in this save (inserted-then-deleted ones included).
    package private(set) var deleted: Set<ID> = []
    /// Whether the save is over: no operation runs any more.
    package private(set) var isFinished = false

    private var depth = 0
    private var journal: Journal?

    private struct Journal {
        var pending: [ID: Entry?] = [:]
        var deleted: [ID: Bool] = [:]
        /// How many objects ``SaveLedger/order`` held before the operation (it only appends, except for
        /// ``forget(_:)``, which keeps the whole order first).
        var orderCount: Int
        var order: [ID]?
    }

    /// An empty ledger.
    package init() {}

    /// Records `entry` as the pending change of `id`, placing `id` last in the order if it had none.
    package func record(_ id: ID, _ entry: Entry) {
        let previous = pending[id]
        if journal != nil, journal?.pending.keys.contains(id) == false { journal?.pending[id] = .some(previous) }
        if previous == nil { order.append(id) }
        pending[id] = entry
    }

    /// Forgets the pending change of `id` and its place in the order (an object inserted, then deleted).
    package func forget(_ id: ID) {
        guard pending[id] != nil else { return }
        if journal != nil, journal?.pending.keys.contains(id) == false { journal?.pending[id] = .some(pending[id]) }
        if journal != nil, journal?.order == nil { journal?.order = order }
        pending[id] = nil
        order.removeAll { $0 == id }
    }

    /// Marks `id` deleted in this save.
    package func markDeleted(_ id: ID) {
        if journal != nil, journal?.deleted[id] == nil { journal?.deleted[id] = deleted.contains(id) }
        deleted.insert(id)
    }

    /// Ends the save: operations are refused from now on.
    package func finish() { isFinished = true }

    /// Runs one operation of the save atomically, in a savepoint on `connection`; refused (with
    /// `refusal()`) once the save is over or outside its transaction. The format's own state follows the
    /// operation through `begin` (before it), `undo` (when it failed, after the ledger is restored) and
    /// `end` (after it, in every case); none is called for a nested operation.
    package func atomically<T>(
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
        journal = Journal(orderCount: order.count)
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
        for (id, value) in journal.pending { pending[id] = value }
        for (id, held) in journal.deleted {
            if held { deleted.insert(id) } else { deleted.remove(id) }
        }
        order = Array((journal.order ?? order).prefix(journal.orderCount))
    }
}
