import CoexistModel
import CoexistSQLite
public import CoexistStore
public import Foundation

/// Where and how a ``ModelContainer`` opens the shared file (SwiftData's `ModelConfiguration`).
public struct ModelConfiguration: Sendable, Hashable {
    /// The SQLite file both stacks share.
    public var url: URL
    /// The app's `.xcdatamodeld` (its current version is the schema) or one `.xcdatamodel`.
    public var modelURL: URL
    /// Whether contexts may save; false opens the file read-only.
    public var allowsSave: Bool
    /// Recorded as the author of every save of the container's contexts.
    public var author: String?

    /// A configuration for the file at `url` with the model at `modelURL`.
    public init(url: URL, modelURL: URL, allowsSave: Bool = true, author: String? = nil) {
        self.url = url
        self.modelURL = modelURL
        self.allowsSave = allowsSave
        self.author = author
    }
}

/// The new side of a shared file, opened for an app (SwiftData's `ModelContainer`): the model, the store
/// and a main context.
///
/// ```swift
/// let container = try ModelContainer(
///     for: TaskSchemaV2.self,
///     configuration: ModelConfiguration(url: storeURL, modelURL: modelURL, author: "new-app"))
/// let context = container.mainContext
/// context.insert(TaskRecord(title: "Buy milk"))
/// try context.save()
/// ```
///
/// The file's new schema must exist (coexistd makes it and keeps it filled from the
/// Core Data tables); the container never creates or converts anything in the file.
public final class ModelContainer {
    /// How the container was opened.
    public let configuration: ModelConfiguration
    /// The store on the file.
    public let store: NewStore
    /// The context the app's main code uses.
    public private(set) lazy var mainContext: ModelContext = makeContext()

    /// Opens the file with the model's current version.
    public init(configuration: ModelConfiguration) throws {
        self.configuration = configuration
        let model = try XCDataModelReader.read(path: configuration.modelURL.path)
        var options = configuration.allowsSave ? OpenOptions() : OpenOptions.readOnly
        options.coreDataTriggerFunctions = true
        store = try NewStore(path: configuration.url.path, model: model, options: options)
        guard try store.schemaExists() else {
            throw StoreError.mismatch(
                path: store.path,
                detail:
                    "the file has no new schema yet: start coexistd on it once (it creates the new schema and fills it from the Core Data tables)"
            )
        }
        try StringFunctions.register(on: store.connection)
    }

    /// Opens the file for the app's versioned schema: refused naming both versions when the file's new
    /// schema is another version (see ``ModelContext/init(_:schema:author:contextName:)``).
    public convenience init<Schema: VersionedSchema>(for schema: Schema.Type, configuration: ModelConfiguration) throws
    {
        try self.init(configuration: configuration)
        _ = try ModelContext(store, schema: schema)
    }

    /// A new context on the container's store, saving with the configuration's author.
    public func makeContext() -> ModelContext {
        ModelContext(container: self)
    }
}

extension ModelContext {
    /// A context on `container`'s store (`ModelContext(container)`).
    public convenience init(_ container: ModelContainer) {
        self.init(container: container)
    }

    convenience init(container: ModelContainer) {
        // The container registered the string functions on its connection.
        self.init(unchecked: container.store, author: container.configuration.author)
        self.container = container
    }
}
