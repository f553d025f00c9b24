import CoexistData
import CoexistModel
import CoexistStore
import TestSupport

/// A shared demo-model file with both schemas in a temporary directory, and contexts on it.
struct SharedDemoFile {
    let directory: TemporaryDirectory
    let path: String

    init() throws {
        directory = try TemporaryDirectory()
        path = try SharedStore.create(in: directory).new.path
    }

    /// A context on its own connection, saving with `author`.
    func context(_ author: String) throws -> ModelContext {
        let model = try XCDataModelReader.read(path: Fixtures.demoModel)
        return try ModelContext(try NewStore(path: path, model: model), author: author)
    }
}
