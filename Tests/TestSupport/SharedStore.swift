public import CoexistLegacyStore
import CoexistModel
public import CoexistStore

/// One demo-model file with both schemas, open through both stores.
public struct SharedStore {
    public let legacy: LegacyStore
    public let new: NewStore

    /// Both stores of one file.
    public init(legacy: LegacyStore, new: NewStore) {
        self.legacy = legacy
        self.new = new
    }

    /// Creates a store of ``LibraryModel`` (its model file is `Library.contents` in `directory`), then the
    /// new schema beside it.
    public static func createLibrary(in directory: TemporaryDirectory) throws -> SharedStore {
        let legacy = try LibraryModel.createStore(in: directory)
        let new = try NewStore(
            path: legacy.path,
            model: try XCDataModelReader.read(path: directory.file("Library.contents"))
        )
        try new.createSchema()
        return SharedStore(legacy: legacy, new: new)
    }

    /// Creates the legacy store from the demo model (V2), then the new schema beside it.
    public static func create(in directory: TemporaryDirectory, name: String = "Shared.sqlite") throws -> SharedStore {
        let legacy = try DemoStore.create(in: directory, name: name)
        let model = try XCDataModelReader.read(path: Fixtures.demoModel)
        let new = try NewStore(path: legacy.path, model: model)
        try new.createSchema()
        return SharedStore(legacy: legacy, new: new)
    }
}
