@_exported public import CoexistLive

extension ModelContext {
    /// The commits of other processes (the new stack's other processes, coexistd's mirrors of the Core Data
    /// app's commits), merged into this context as they happen: one ``ModelRemoteChange`` per transaction,
    /// in token order, each naming its token.
    ///
    /// ```swift
    /// for try await change in try context.remoteChanges(from: .coexistd(socket: "/run/coexist/coexist.sock")) {
    ///     refreshViews(updated: change.updated, deleted: change.deleted, token: change.token)
    /// }
    /// ```
    ///
    /// Iterating runs ``mergeChangesFromStore()`` on the iterating task whenever `source` reports a commit:
    /// held records take the stored values at once, deleted ones leave the context, unsaved edits are kept
    /// and reported as ``ModelRemoteChange/conflicts``. Use the context from that task only.
    public func remoteChanges(from source: CommitSource = .file) throws -> RemoteChanges<ModelRemoteChange> {
        let watcher = try source.watcher(path: store.path, side: "new")
        return RemoteChanges(watcher: watcher) { [self] in try mergeChangesFromStore() }
    }
}
