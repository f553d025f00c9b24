import CoexistStore

extension ModelContext {
    /// Discards every unsaved change (SwiftData's `rollback()`): inserted records leave the context,
    /// deleted ones are kept, and every record gets back the attributes and relationships it had when it
    /// was last fetched or saved.
    public func rollback() {
        for registration in Array(registrations.values) {
            guard let snapshot = registration.snapshot else {
                unregister(registration)
                continue
            }
            registration.deleted = false
            for (slot, attribute) in registration.schema.attributes.enumerated() {
                _ = attribute.write(registration.object, snapshot.attributes[slot])
            }
        }
        for registration in registrations.values {
            guard let snapshot = registration.snapshot else { continue }
            for (slot, relationship) in registration.schema.relationships.enumerated() {
                let objects = snapshot.relationships[slot].compactMap { ref in
                    byRef[ref]?.object
                }
                relationship.write(registration.object, objects)
            }
        }
    }

    /// Runs `body`, then saves what it changed as one transaction (SwiftData's `transaction(block:)`).
    /// When `body` or the save throws, nothing was written: every unsaved change of the context is rolled
    /// back and the error rethrown. A save that committed never throws. Returns the save's history token.
    @discardableResult
    public func transaction(_ body: () throws -> Void) throws -> Int64? {
        do {
            try body()
            return try save()
        } catch {
            rollback()
            throw error
        }
    }
}
