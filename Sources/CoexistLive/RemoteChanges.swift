/// The changes other processes commit to a store file, as a context merges them: one element per
/// transaction, in token order, each naming its token. A context's `remoteChanges(from:)` makes one.
///
/// Iterating merges into the context on the iterating task (the context's own): the first element comes
/// from what was committed since the context's last merge, the next ones as the ``StoreWatcher`` reports
/// commits. The sequence ends with the watcher, throwing what stopped it; an error of the merge itself
/// ends it too. Not `Sendable`, like the context it merges into.
public struct RemoteChanges<Change>: AsyncSequence {
    /// One transaction's change, as the context's merge reports it.
    public typealias Element = Change
    /// What ends the sequence early: the watcher's error, or the merge's.
    public typealias Failure = any Error

    /// What reports the commits: ``StoreWatcher/stop()`` ends the sequence (from any task).
    public let watcher: StoreWatcher
    let merge: () throws -> [Change]

    /// A sequence merging with `merge` each time `watcher` reports commits.
    package init(watcher: StoreWatcher, merge: @escaping () throws -> [Change]) {
        self.watcher = watcher
        self.merge = merge
    }

    /// An iterator that merges as it is asked for changes.
    public func makeAsyncIterator() -> Iterator {
        Iterator(watcher: watcher, commits: watcher.commits.makeAsyncIterator(), merge: merge)
    }

    /// Merges on demand: a commit reported, then the changes it brought, one by one.
    public struct Iterator: AsyncIteratorProtocol {
        let watcher: StoreWatcher
        var commits: AsyncThrowingStream<Int64, any Error>.Iterator
        let merge: () throws -> [Change]
        var pending: [Change] = []
        var caughtUp = false

        /// The next change: what was committed since the context's last merge, else the next commit's once
        /// the watcher reports it; nil when the watcher stopped. Merges on `actor`'s executor (the caller's).
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(any Error) -> Change? {
            if !caughtUp {
                caughtUp = true
                pending = try merge()
            }
            while pending.isEmpty {
                guard try await commits.next(isolation: actor) != nil else { return nil }
                pending = try merge()
            }
            return pending.removeFirst()
        }

        /// The next change (see ``next(isolation:)``).
        public mutating func next() async throws -> Change? { try await next(isolation: nil) }
    }
}
