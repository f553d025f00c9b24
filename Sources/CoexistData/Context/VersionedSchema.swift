public import CoexistStore

/// A version of the app's new-side schema, in the spirit of SwiftData's `VersionedSchema`: which model
/// version it is (the `.xcdatamodel`'s version identifier, `userDefinedModelVersionIdentifier`) and its
/// record types.
///
/// ```swift
/// enum TaskSchemaV2: VersionedSchema {
///     static let versionIdentifier = "2.0.0"
///     static var models: [any PersistentModel.Type] { [TaskRecord.self, CategoryRecord.self] }
/// }
/// let context = try ModelContext(store, schema: TaskSchemaV2.self)
/// ```
public protocol VersionedSchema {
    /// The model version identifier this schema is.
    static var versionIdentifier: String { get }
    /// The record types it maps.
    static var models: [any PersistentModel.Type] { get }
}

extension ModelContext {
    /// A context on `store` for the app's schema `schema`: refused with ``StoreError/versionMismatch(path:detail:)``
    /// naming both versions when the file's new schema (or the model the store was opened with) is another
    /// version, or when a record type names an entity the model does not have.
    public convenience init<Schema: VersionedSchema>(
        _ store: NewStore,
        schema: Schema.Type,
        author: String? = nil,
        contextName: String? = nil
    ) throws {
        let wanted = Schema.versionIdentifier
        let named = "\(Schema.self) (version \(wanted))"
        if let stored = try store.storedVersion(), !stored.contains(wanted) {
            throw StoreError.versionMismatch(
                path: store.path,
                detail: "the new schema in the file is version \(stored.joined(separator: ", ")); the app's schema is "
                    + "\(named): migrate the file (coexistctl migrate), or open it with the schema of its version"
            )
        }
        guard store.model.versionIdentifiers.contains(wanted) else {
            throw StoreError.versionMismatch(
                path: store.path,
                detail:
                    "the store was opened with model version \(store.model.versionIdentifiers.joined(separator: ", ")); "
                    + "the app's schema is \(named)"
            )
        }
        for record in Schema.models where store.model.entity(named: record.erasedEntityName) == nil {
            throw StoreError.versionMismatch(
                path: store.path,
                detail: "\(named) maps entity \(record.erasedEntityName), which model version \(wanted) does not have"
            )
        }
        try self.init(store, author: author, contextName: contextName)
    }
}

extension PersistentModel {
    /// The entity of the record type.
    static var erasedEntityName: String { schema.entity }
}
