import CoexistRuntime
import Foundation
import TestSupport
import Testing

/// A watcher of a database's `-wal` in its directory: writes to the watched file are seen, including after it
/// is removed and made again; writes to the directory's other files are not, and do not make the
/// descriptor readable.
@Suite struct DirectoryWatcherTests {
    @Test func onlyTheWatchedFilesWritesAreSeen() throws {
        let directory = try TemporaryDirectory()
        let database = directory.file("a.sqlite")
        let wal = database + "-wal"
        try Data("db".utf8).write(to: URL(fileURLWithPath: database))
        let watcher = try DirectoryWatcher(directory: directory.path, names: ["a.sqlite-wal"])
        #expect(!watcher.drain())

        // The database file (a checkpoint writes it): nothing to read at all.
        try append("page", to: database)
        #expect(!Self.readable(watcher))
        #expect(!watcher.drain())

        // The WAL appearing, then written.
        try Data().write(to: URL(fileURLWithPath: wal))
        #expect(Self.readable(watcher) && watcher.drain())
        try append("frame", to: wal)
        #expect(Self.readable(watcher) && watcher.drain())

        // Removed and made again (SQLite does when the last connection closes and another opens): the new
        // file's writes are seen.
        try FileManager.default.removeItem(atPath: wal)
        _ = watcher.drain()
        try Data().write(to: URL(fileURLWithPath: wal))
        #expect(watcher.drain())
        try append("frame", to: wal)
        #expect(Self.readable(watcher) && watcher.drain())
        try append("page", to: database)
        #expect(!watcher.drain())
    }

    @Test func aFileThatExistsAtTheStartIsWatched() throws {
        let directory = try TemporaryDirectory()
        let wal = directory.file("b.sqlite-wal")
        try Data().write(to: URL(fileURLWithPath: wal))
        let watcher = try DirectoryWatcher(directory: directory.path, names: ["b.sqlite-wal"])
        #expect(!Self.readable(watcher))
        try append("frame", to: wal)
        #expect(Self.readable(watcher) && watcher.drain())
        // Moved in over it (a new inode): seen, and watched from then on.
        let other = directory.file("other")
        try Data().write(to: URL(fileURLWithPath: other))
        try FileManager.default.removeItem(atPath: wal)
        try FileManager.default.moveItem(atPath: other, toPath: wal)
        #expect(Self.readable(watcher) && watcher.drain())
        try append("frame", to: wal)
        #expect(Self.readable(watcher) && watcher.drain())
    }

    private func append(_ text: String, to path: String) throws {
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(text.utf8))
        try handle.close()
    }

    /// Whether the watcher's descriptor is readable within 200 ms.
    static func readable(_ watcher: DirectoryWatcher) -> Bool {
        var descriptor = pollfd(fd: watcher.descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 200) > 0
    }
}
