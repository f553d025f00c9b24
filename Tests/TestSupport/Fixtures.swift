import Foundation

/// Paths of the real Core Data stores and models shared with the project (../shared/fixtures/coredata).
///
/// The folder is found from this file's location (the repository's parent holds `shared/`), or from the
/// `COEXIST_FIXTURES` environment variable. Fixtures are read-only: tests copy them before writing.
public enum Fixtures {
    /// The fixtures folder.
    public static var root: String {
        if let override = ProcessInfo.processInfo.environment["COEXIST_FIXTURES"] { return override }
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return repository.deletingLastPathComponent().appendingPathComponent("shared/fixtures/coredata").path
    }

    /// The repository checkout (for `config/`).
    public static var repository: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
    }

    /// Photos 26.1 (with its -wal and -shm): 410 history transactions once the WAL is applied.
    public static var photos: String { root + "/osxphotos/Test-26.1/Photos.sqlite" }
    /// CoreDataPlus SampleModel2 V1: derived-attribute triggers, one history transaction of 5,468 inserts.
    public static var sampleModel2V1: String { root + "/CoreDataPlus/SampleModel2_V1.sqlite" }
    /// CoreDataPlus SampleModel2 V2.
    public static var sampleModel2V2: String { root + "/CoreDataPlus/SampleModel2_V2.sqlite" }
    /// CoreDataPlus SampleModel V1: three-level inheritance, compound unique index, no history.
    public static var sampleModelV1: String { root + "/CoreDataPlus/SampleModel_V1.sqlite" }
    /// CoreDataPlus SampleModel V2.
    public static var sampleModelV2: String { root + "/CoreDataPlus/SampleModel_V2.sqlite" }
    /// objc.io Moody (framework 637, 2015).
    public static var moody: String { root + "/objcio-core-data/Moody.moody" }
    /// objc.io Moody 5.
    public static var moody5: String { root + "/objcio-core-data/Moody 5.moody" }
    /// The SampleModel `.xcdatamodeld` (three versions).
    public static var sampleModelXcdatamodeld: String { root + "/CoreDataPlus/model/SampleModel.xcdatamodeld" }
    /// The compiled SampleModel's VersionInfo.plist.
    public static var sampleModelVersionInfo: String { root + "/CoreDataPlus/model/SampleModel.momd/VersionInfo.plist" }
    /// The Moody `.xcdatamodeld` (Moody and Moody 5).
    public static var moodyXcdatamodeld: String { root + "/objcio-core-data/model/Moody.xcdatamodeld" }
    /// The demo Task/Category model in `config/`.
    public static var demoModel: String { repository + "/config/TaskModel.xcdatamodeld" }

    /// Every fixture store.
    public static var allStores: [String] {
        [photos, sampleModel2V1, sampleModel2V2, sampleModelV1, sampleModelV2, moody, moody5]
    }
}
