public import CoexistLegacyStore
import CoexistModel
public import CoexistStore

/// One demo-model file with both schemas, open through both stores.
public struct SharedStore {
    public let legacy: LegacyStore
    public let new: NewStore

    /// Creates the legacy store from the demo model (V2), then the new schema beside it.
    public static func create(in directory: TemporaryDirectory, name: String = "Shared.sqlite") throws -> SharedStore {
        let legacy = try DemoStore.create(in: directory, name: name)
        let model = try XCDataModelReader.read(path: Fixtures.demoModel)
        let new = try NewStore(path: legacy.path, model: model)
        try new.createSchema()
        return SharedStore(legacy: legacy, new: new)
    }
}
