import Foundation

/// Paths of the real Core Data stores and models shared with the project (../shared/fixtures/coredata).
///
/// The shared folder is found from this file's location (the repository's parent holds `shared/`), or from the
/// `COEXIST_FIXTURES` environment variable. SQLite never opens it: on first use, each test process copies the
/// whole folder into a private temporary one, writable, and every path below points into that copy. Two reasons:
/// the shared stores stay byte-for-byte untouched (SQLite rebuilds a `-shm` it opens read-write), and no test
/// can break another process's SQLite locks — POSIX record locks are per process, so merely copying a file
/// that SQLite holds open in this process (`close()` of any descriptor of that file) drops this process's locks
/// on it, after which a second process may truncate a `-shm` this one has mapped (SIGBUS). Copies for writing
/// (`TemporaryDirectory.copy`) are taken from the shared folder, which nothing holds open.
public enum Fixtures {
    /// The shared fixtures folder, copied from and never opened by SQLite.
    public static var shared: String {
        if let override = ProcessInfo.processInfo.environment["COEXIST_FIXTURES"] { return override }
        return URL(fileURLWithPath: repository).deletingLastPathComponent().appendingPathComponent(
            "shared/fixtures/coredata"
        )
        .path
    }

    /// This process's private copy of the fixtures folder (made once, removed at exit).
    public static var root: String { privateCopy.root }

    /// The shared-folder path of `path` when it points into this process's private copy, else `path` itself.
    public static func sharedPath(of path: String) -> String {
        let root = privateCopy.root
        guard path.hasPrefix(root + "/") else { return path }
        return privateCopy.source + path.dropFirst(root.count)
    }

    private static let privateCopy: (source: String, root: String) = {
        let source = shared
        var template = Array("/tmp/cx-fixtures.XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            return fallback(source, reason: "mkdtemp failed (errno \(errno))")
        }
        let root = String(cString: made) + "/coredata"
        do {
            try FileManager.default.copyItem(atPath: source, toPath: root)
            try makeWritable(root)
        } catch {
            return fallback(source, reason: "\(error)")
        }
        atexit {
            try? FileManager.default.removeItem(
                atPath: URL(fileURLWithPath: Fixtures.root).deletingLastPathComponent().path
            )
        }
        return (source, root)
    }()

    private static func fallback(_ source: String, reason: String) -> (source: String, root: String) {
        FileHandle.standardError.write(
            Data("tests: cannot copy the fixtures (\(reason)); using \(source) in place\n".utf8)
        )
        return (source, source)
    }

    private static func makeWritable(_ root: String) throws {
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: root)
        guard let walker = FileManager.default.enumerator(atPath: root) else { return }
        for case let relative as String in walker {
            let path = root + "/" + relative
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
            try FileManager.default.setAttributes(
                [.posixPermissions: isDirectory.boolValue ? 0o755 : 0o644],
                ofItemAtPath: path
            )
        }
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
