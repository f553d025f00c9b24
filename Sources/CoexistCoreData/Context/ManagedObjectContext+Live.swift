@_exported public import CoexistLive

extension ManagedObjectContext {
    /// The commits of other processes (the Core Data app's other processes, coexistd's mirrors of the new
    /// schema's commits), merged into this context as they happen: one ``StoreRemoteChange`` per
    /// transaction, in token order, each naming its token (`NSPersistentStoreRemoteChange`).
    ///
    /// ```swift
    /// for try await change in try context.remoteChanges(from: .coexistd(socket: "/run/coexist/coexist.sock")) {
    ///     refreshViews(updated: change.updated, deleted: change.deleted, token: change.token)
    /// }
    /// ```
    ///
    /// Iterating runs ``mergeChangesFromStore()`` on the iterating task whenever `source` reports a commit:
    /// objects the context holds show the new values without a fetch, deleted ones leave it, unsaved edits
    /// are kept and reported as ``StoreRemoteChange/conflicts``. Use the context from that task only.
    public func remoteChanges(
        from source: CommitSource = .file
    ) throws(CoreDataError) -> RemoteChanges<StoreRemoteChange> {
        let watcher: StoreWatcher
        do {
            watcher = try source.watcher(path: path, side: "legacy")
        } catch {
            throw .store("\(error)")
        }
        return RemoteChanges(watcher: watcher) { [self] in try mergeChangesFromStore() }
    }
}
