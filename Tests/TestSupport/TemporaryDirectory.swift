public import Foundation

/// A fresh directory under the system temporary folder, removed when the value is released.
///
/// Paths stay short (`/tmp/cx.XXXXXX`) so Unix-socket paths inside fit the 108-byte limit.
public final class TemporaryDirectory: @unchecked Sendable {
    /// The directory's path.
    public let path: String

    /// Creates the directory.
    public init() throws {
        var template = Array("/tmp/cx.XXXXXX".utf8CString)
        guard let result = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw CocoaError(.fileWriteUnknown)
        }
        path = String(cString: result)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// Every file's bytes, by name — but a `-shm`'s, SQLite's shared-memory index that every reader of a WAL
    /// database marks its reads in (its presence is compared all the same): to prove a command wrote nothing.
    public func contents() throws -> [String: Data] {
        var contents: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: path) {
            contents[name] = name.hasSuffix("-shm") ? Data() : FileManager.default.contents(atPath: file(name))
        }
        return contents
    }

    /// A path inside the directory.
    public func file(_ name: String) -> String { path + "/" + name }

    /// Copies a store with its `-wal` and `-shm` files into the directory, writable, and returns the copy's path.
    ///
    /// A fixture path is copied from the shared folder, never from the process's private copy that SQLite may
    /// hold open (see ``Fixtures``).
    public func copy(_ store: String, as name: String? = nil) throws -> String {
        let target = file(name ?? URL(fileURLWithPath: store).lastPathComponent)
        let source = Fixtures.sharedPath(of: store)
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: source + suffix) {
            try FileManager.default.copyItem(atPath: source + suffix, toPath: target + suffix)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: target + suffix)
        }
        return target
    }

    /// Writes `bytes` to a file in the directory and returns its path.
    public func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let target = file(name)
        try Data(bytes).write(to: URL(fileURLWithPath: target))
        return target
    }
}
