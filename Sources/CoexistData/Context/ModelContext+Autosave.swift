extension ModelContext {
    /// Autosave's settings and the task that runs it.
    struct Autosave {
        var enabled = false
        var interval: Duration = .seconds(1)
        var loop: Task<Void, Never>?
        var lastError: (any Error)?
    }

    /// Whether the context saves its pending changes by itself (SwiftData's `autosaveEnabled`): every
    /// ``autosaveInterval``, on the main actor, a context with changes saves them as ``save()`` does.
    ///
    /// Off by default, also for a container's `mainContext` (SwiftData turns it on there): it runs on the
    /// main actor, so turn it on only for a context the app uses from the main actor, in a program whose
    /// main actor runs (an `async` main, a run loop). A failed autosave keeps the changes, as a failed
    /// save does, and is reported in ``lastAutosaveError``; the next interval tries again.
    public var autosaveEnabled: Bool {
        get { autosave.enabled }
        set {
            guard newValue != autosave.enabled else { return }
            autosave.enabled = newValue
            autosave.loop?.cancel()
            autosave.loop = newValue ? startAutosave() : nil
        }
    }

    /// How long autosave waits between two looks at the context's changes (1 second by default, at least
    /// 10 ms).
    public var autosaveInterval: Duration {
        get { autosave.interval }
        set { autosave.interval = max(newValue, .milliseconds(10)) }
    }

    /// Why the last autosave failed; nil after one that succeeded.
    public var lastAutosaveError: (any Error)? { autosave.lastError }

    private func startAutosave() -> Task<Void, Never> {
        let reference = ContextReference(self)
        return Task { @MainActor in
            while !Task.isCancelled {
                guard let interval = reference.context?.autosave.interval else { return }
                do {
                    try await Task.sleep(for: interval)
                } catch {
                    return
                }
                guard let context = reference.context, context.autosave.enabled else { return }
                context.saveIfChanged()
            }
        }
    }

    /// One autosave: saves when there is something to save, and records how it went.
    func saveIfChanged() {
        guard hasChanges else { return }
        do {
            try save()
            autosave.lastError = nil
        } catch {
            autosave.lastError = error
        }
    }
}

/// A weak reference to a context, for the autosave task: the task never keeps a context alive, and the
/// context is only used from the main actor there (the contract of ``ModelContext/autosaveEnabled``).
private final class ContextReference: @unchecked Sendable {
    weak var context: ModelContext?

    init(_ context: ModelContext) { self.context = context }
}
