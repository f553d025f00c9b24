public import CoexistLegacyStore
public import CoexistModel
import CoexistSQLite

/// Fresh stores for tests that write.
public enum DemoStore {
    /// A new, empty Core Data store of the demo Task/Category model (V2) in `directory`, open read-write.
    public static func create(in directory: TemporaryDirectory, name: String = "Demo.sqlite") throws -> LegacyStore {
        let model = try XCDataModelReader.read(path: Fixtures.demoModel)
        return try StoreCreator.create(path: directory.file(name), model: model)
    }

    /// A new, empty store of the demo model's first version, TaskModel (1.0.0): one to migrate.
    public static func createVersion1(
        in directory: TemporaryDirectory,
        name: String = "Tasks.sqlite"
    ) throws -> LegacyStore {
        let model = try XCDataModelReader.read(path: Fixtures.demoModel + "/TaskModel.xcdatamodel")
        return try StoreCreator.create(path: directory.file(name), model: model)
    }

    /// Opens a copy of a fixture store in `directory` for writing.
    public static func writableCopy(of fixture: String, in directory: TemporaryDirectory) throws -> LegacyStore {
        try LegacyStore(path: directory.copy(fixture), options: OpenOptions())
    }

    /// A 16-byte UUID value from a small number, for readable tests.
    public static func uuid(_ number: UInt8) -> AttributeValue {
        .uuid([UInt8](repeating: 0, count: 15) + [number])
    }
}

extension DemoStore {
    /// A value for every mandatory attribute of `entityName` that has no default, so that an insert passes.
    public static func mandatoryValues(
        for entityName: String,
        in store: LegacyStore,
        seed: Int64 = 1
    ) -> [String: AttributeValue] {
        guard let model = store.model, let entity = model.entity(named: entityName) else { return [:] }
        var values: [String: AttributeValue] = [:]
        for attribute in model.allAttributes(of: entity)
        where !attribute.isOptional && attribute.defaultValue == nil && !attribute.isTransient && !attribute.isDerived {
            switch attribute.type {
            case .integer16, .integer32, .integer64: values[attribute.name] = .integer(seed)
            case .boolean: values[attribute.name] = .boolean(false)
            case .double, .float: values[attribute.name] = .double(Double(seed))
            case .decimal: values[attribute.name] = .decimal(String(seed))
            case .date: values[attribute.name] = .date(Double(seed))
            case .string: values[attribute.name] = .string("value \(seed)")
            case .uri: values[attribute.name] = .uri("https://example.org/\(seed)")
            case .uuid:
                values[attribute.name] = .uuid((0..<16).map { UInt8(truncatingIfNeeded: seed >> (($0 % 8) * 8)) })
            case .binary: values[attribute.name] = .binary([UInt8(truncatingIfNeeded: seed)])
            case .transformable, .objectID, .composite, .undefined: values[attribute.name] = .transformable([])
            }
        }
        return values
    }
}
