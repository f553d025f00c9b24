import CoexistHistory

/// The conflict window: the pending history a pass reads, kept between passes (read ahead) so that a backlog
/// is read once, bounded by ``SyncEngine/windowTransactions`` and ``SyncEngine/windowChanges``.
extension SyncEngine {
    /// The pending transactions after `cursor` (the conflict window) and their resolver: what the last
    /// passes read ahead, less what the cursor passed, plus what was committed since, within the bounds.
    func window(after cursor: Int64) throws -> ([HistoryTransaction], ConflictResolver) {
        if let from = readAheadCursor, cursor < from { dropReadAhead() }  // the cursor went back (replay)
        let resolver = self.resolver ?? ConflictResolver(engine: self)
        self.resolver = resolver
        let passed = readAhead.prefix { $0.token <= cursor }
        if !passed.isEmpty {
            readAheadChanges -= passed.reduce(0) { $0 + $1.changes.count }
            readAhead.removeFirst(passed.count)
            resolver.forget(through: cursor)
        }
        readAheadCursor = cursor
        let last = readAhead.last?.token ?? cursor
        let room = Self.windowTransactions - readAhead.count
        let budget = Self.windowChanges - readAheadChanges
        if room > 0 && (budget > 0 || readAhead.isEmpty) {
            let through = try reader.lastToken(after: last, withinChanges: max(0, budget)) ?? .max
            var more = through > last ? try reader.transactions(after: last, through: through, limit: room) : []
            if more.isEmpty && readAhead.isEmpty {
                more = try reader.transactions(after: last, limit: 1)  // one transaction larger than the budget
            }
            for transaction in more { try resolver.add(transaction) }
            readAhead += more
            readAheadChanges += more.reduce(0) { $0 + $1.changes.count }
        }
        try resolver.resolvePending()
        return (readAhead, resolver)
    }

    /// Forgets the read-ahead and the resolver (the next pass reads again).
    func dropReadAhead() {
        readAhead.removeAll()
        readAheadCursor = nil
        readAheadChanges = 0
        resolver = nil
    }
}
