import CoexistHistory
import CoexistModel
import CoexistSQLite
import Foundation
import TestSupport
import Testing

/// A checkpoint killed after writing page 1 leaves a WAL-mode file whose header counts pages the file does
/// not have yet; they are in the WAL, and SQLite reads them from there. coexistd must serve such a file
/// (measured: the crash harness on SampleModel, coexistd SIGKILLed while checkpointing, then refused to
/// start with "the database is truncated" until a person intervened).
@Suite struct InterruptedCheckpointTests {
    /// Copies of a store in `directory` as such a checkpoint leaves it (`names`, each with its -wal).
    func crashedCopies(in directory: TemporaryDirectory, _ names: [String]) throws -> [String] {
        let store = try DemoStore.create(in: directory)
        try store.connection.execute("PRAGMA wal_autocheckpoint = 0")
        for batch in 0..<4 {
            _ = try store.save(SaveMetadata(author: "old-app")) { save in
                for index in 0..<100 {
                    _ = try save.insert(
                        "Task",
                        [
                            "id": .uuid(UUIDText.randomBytes()), "title": .string("task \(batch).\(index)"),
                            "createdAt": .date(0),
                        ]
                    )
                }
            }
        }
        // The files as a crash would leave them (the writer's connection is still open: nothing checkpointed),
        // then page 1 as the checkpoint wrote it first: the latest page-1 frame of the WAL.
        let database = try #require(FileManager.default.contents(atPath: store.path))
        let wal = try #require(FileManager.default.contents(atPath: store.path + "-wal"))
        let pageSize = 4096
        var pageOne: Data?
        var offset = 32
        while offset + 24 + pageSize <= wal.count {
            let number = wal[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            if number == 1 { pageOne = wal[(offset + 24)..<(offset + 24 + pageSize)] }
            offset += 24 + pageSize
        }
        var crashed = database
        crashed.replaceSubrange(0..<pageSize, with: try #require(pageOne))
        let header = crashed[28..<32].reduce(0) { $0 << 8 | Int($1) }
        try #require(header * pageSize > crashed.count, "page 1 counts pages the file does not have")
        return try names.map { name in
            let path = directory.file(name)
            try crashed.write(to: URL(fileURLWithPath: path))
            try wal.write(to: URL(fileURLWithPath: path + "-wal"))
            return path
        }
    }

    @Test func aFileWhoseLastPagesAreInTheWALIsServed() throws {
        let directory = try TemporaryDirectory()
        let path = try crashedCopies(in: directory, ["Crashed.sqlite"])[0]

        let once = try ProductProcess.run("coexistd", ["--database", path, "--socket", directory.file("s"), "--once"])
        #expect(once.status == 0, "\(once.stderr)")
        let verify = try ProductProcess.run("coexistctl", ["verify", path])
        #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
        let mirrored = try Connection(path: path, options: OpenOptions(access: .readOnly)).scalar(
            "SELECT count(*) FROM task"
        )
        #expect(mirrored == .integer(400))
    }

    /// A running coexistd that finds the file so (another process's checkpoint killed after page 1) completes
    /// the checkpoint and serves on, instead of calling the file truncated.
    @Test func aRunningDaemonCompletesTheCheckpoint() throws {
        let directory = try TemporaryDirectory()
        let path = try crashedCopies(in: directory, ["Crashed.sqlite"])[0]
        let daemon = try DaemonProcess(database: path, directory: directory)
        let client = try SocketClient(path: daemon.socket)
        sleep(3)  // three header checks, a second apart
        let status = try client.request(#"{"op":"status"}"#)
        #expect(status["type"] as? String == "status", "\(status)")
        #expect(daemon.stop() == 0, "\(daemon.log)")
        #expect(
            try DatabaseFileHeader.read(path: path).pageCount * 4096
                <= (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0)
        )
    }
}
