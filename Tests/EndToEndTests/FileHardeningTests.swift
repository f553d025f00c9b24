import CoexistHistory
import CoexistSQLite
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What coexistd does with the files it is given and the files under it: it never removes or rewrites a
/// file it refuses, and notices when the database is replaced, deleted or damaged while it runs.
@Suite struct FileHardeningTests {
    static func bytes(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

    /// `--socket` naming the database (or any regular file) is refused; the file keeps every byte.
    @Test func aSocketPathNeverReplacesAFile() throws {
        let directory = try TemporaryDirectory()
        let path = try SharedStore.create(in: directory).legacy.path
        let before = try #require(Self.bytes(path))
        let onDatabase = try ProductProcess.run("coexistd", ["--database", path, "--socket", path])
        #expect(onDatabase.status == 78, "\(onDatabase.stderr)")
        #expect(onDatabase.stderr.contains("is the database's own path") || onDatabase.stderr.contains("not a socket"))
        #expect(Self.bytes(path) == before, "the database is untouched")
        // Any other regular file: refused by the configuration check, and by bind itself.
        let other = try directory.write("notes.txt", Array("keep me".utf8))
        let onFile = try ProductProcess.run("coexistd", ["--database", path, "--socket", other])
        #expect(onFile.status == 78, "\(onFile.stderr)")
        #expect(onFile.stderr.contains("not a socket"))
        #expect(Self.bytes(other) == Data("keep me".utf8))
    }

    /// A stale socket file (nobody listening) is still replaced.
    @Test func aStaleSocketIsReplaced() throws {
        let directory = try TemporaryDirectory()
        let path = try SharedStore.create(in: directory).legacy.path
        let socket = directory.file("c.sock")
        let stale = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in socket.utf8.enumerated() { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(stale, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        #expect(bound == 0)
        close(stale)
        let daemon = try DaemonProcess(database: path, directory: directory)
        #expect(try SocketClient(path: daemon.socket).request(#"{"op":"ping"}"#)["type"] as? String == "pong")
        #expect(daemon.stop() == 0)
    }

    /// A socket someone listens on whose backlog is full (connections wait there) is not taken for stale:
    /// coexistd refuses to start, without waiting and without removing it (its probe blocked on such a
    /// listener, and took any failed connection for a stale file).
    @Test func aBusyListenerIsNotReplaced() throws {
        let directory = try TemporaryDirectory()
        let path = try SharedStore.create(in: directory).legacy.path
        let socket = directory.file("c.sock")
        let listener = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in socket.utf8.enumerated() { raw[index] = byte }
        }
        func connectTo(_ descriptor: Int32) -> Int32 {
            withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
        }
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        #expect(bound == 0 && listen(listener, 0) == 0)
        // Fill the backlog: connections nobody accepts, until one would wait.
        var waiting: [Int32] = []
        defer { waiting.forEach { close($0) } }
        while waiting.count < 16 {
            let client = Glibc.socket(
                AF_UNIX,
                Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
                0
            )
            waiting.append(client)
            if connectTo(client) != 0 { break }
        }
        let daemon = try DaemonProcess(database: path, directory: directory)
        let status = daemon.stop(after: 30)
        #expect(status != 0 && status != SIGTERM, "it exits by itself, refusing: \(daemon.log)")
        #expect(daemon.log.contains("listens"), "\(daemon.log)")
        var file = stat()
        #expect(lstat(socket, &file) == 0 && (file.st_mode & S_IFMT) == S_IFSOCK, "the socket is still there")
    }

    /// A plain SQLite file, an empty file and a text file are refused by coexistd, `coexistd --once`,
    /// `--check-config` and `coexistctl verify`, and stay byte-identical, with no `-wal` created.
    @Test func refusingAFileLeavesItUntouched() throws {
        let directory = try TemporaryDirectory()
        // An ordinary SQLite file in rollback-journal mode: coexistd must not switch it to WAL.
        let plain = directory.file("plain.sqlite")
        try Connection(path: plain, options: OpenOptions(access: .readWriteCreate, walMode: false))
            .execute("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('keep')")
        let empty = try directory.write("empty.sqlite", [])
        let text = try directory.write("text.sqlite", Array(String(repeating: "text ", count: 300).utf8))
        for path in [plain, empty, text] {
            let before = try #require(Self.bytes(path))
            let socket = ["--socket", directory.file("c.sock")]
            let runs = [
                try ProductProcess.run("coexistd", ["--database", path] + socket),
                try ProductProcess.run("coexistd", ["--database", path, "--once"] + socket),
                try ProductProcess.run("coexistd", ["--database", path, "--check-config"] + socket),
                try ProductProcess.run("coexistctl", ["verify", path]),
            ]
            for run in runs {
                #expect(run.status == 65, "\(path): \(run.stderr)")
                #expect(run.stderr.contains(path))
            }
            #expect(Self.bytes(path) == before, "\(path) is byte-identical")
            #expect(!FileManager.default.fileExists(atPath: path + "-wal"), "\(path) was not switched to WAL")
        }
    }

    /// The database deleted, or replaced by another file, under a running coexistd: it says so once and
    /// exits 74, so that systemd restarts it on the file now at the path.
    @Test func aReplacedOrDeletedDatabaseStopsTheDaemon() throws {
        for replace in [false, true] {
            let directory = try TemporaryDirectory()
            let path = try SharedStore.create(in: directory).legacy.path
            let daemon = try DaemonProcess(database: path, directory: directory)
            try daemon.waitUntilServing()
            if replace {
                let fresh = try SharedStore.create(in: directory, name: "Fresh.sqlite").legacy.path
                #expect(rename(fresh, path) == 0)
            } else {
                #expect(unlink(path) == 0)
            }
            let status = daemon.stop(after: 10)
            let log = daemon.log
            #expect(status == 74, "replaced: \(replace): \(log)")
            #expect(log.contains(replace ? "was replaced" : "was deleted"), "\(log)")
            #expect(log.split(separator: "\n").count < 10, "no log storm: \(log)")
        }
    }

    /// The database truncated under a running coexistd: a few lines, exit 65, no busy loop.
    @Test func aTruncatedDatabaseStopsTheDaemon() throws {
        let directory = try TemporaryDirectory()
        let shared = try SharedStore.create(in: directory)
        let path = shared.legacy.path
        for index in 0..<200 {
            _ = try shared.legacy.save(SaveMetadata(author: "old-app")) { save in
                try save.insert(
                    "Task",
                    ["id": DemoStore.uuid(UInt8(index % 250)), "title": .string("t\(index)"), "createdAt": .date(0)]
                )
            }
        }
        try shared.legacy.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        let daemon = try DaemonProcess(database: path, directory: directory)
        try daemon.waitUntilServing()
        // Once the initial sync's WAL is checkpointed (after 250 ms without a pass), cut the file in half.
        sleep(1)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        #expect(truncate(path, off_t(size / 2)) == 0)
        _ = try? shared.legacy.save(SaveMetadata(author: "old-app")) { save in
            try save.insert("Task", ["id": DemoStore.uuid(251), "title": .string("late"), "createdAt": .date(0)])
        }
        let status = daemon.stop(after: 10)
        let log = daemon.log
        #expect(status == 65, "\(log)")
        #expect(log.contains("truncated") || log.contains("malformed"), "\(log)")
        #expect(log.split(separator: "\n").count < 20, "no log storm: \(log)")
    }

    /// Legacy objects sharing an id: `status` counts the parked ones (it said 0 when they were merged).
    @Test func statusCountsObjectsParkedForASharedId() throws {
        let directory = try TemporaryDirectory()
        let shared = try SharedStore.create(in: directory)
        try shared.legacy.save(SaveMetadata(author: "old-app")) { save in
            for index in 0..<30 {
                _ = try save.insert(
                    "Task",
                    ["id": DemoStore.uuid(UInt8(index % 20)), "title": .string("t\(index)"), "createdAt": .date(0)]
                )
            }
        }
        let daemon = try DaemonProcess(database: shared.legacy.path, directory: directory)
        try daemon.waitUntilServing()
        let status = try SocketClient(path: daemon.socket).request(#"{"op":"status"}"#)
        #expect(status["parked"] as? Int == 10, "\(status)")
        #expect(daemon.stop() == 0)
        let verify = try ProductProcess.run("coexistctl", ["verify", shared.legacy.path])
        #expect(verify.status == 1)
        #expect(verify.stdout.contains("10 differences"), "\(verify.stdout)")
    }

    /// `verify` and `inspect` on a Core Data store the bridge never ran on: verify says so in one line
    /// (exit 1), and the folder is left as it was: no new table, no `-wal` or `-shm` left behind.
    @Test func readCommandsLeaveAnUnbridgedStoreAsItWas() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.copy(Fixtures.sampleModelV1)
        let listing = { try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() }
        let before = (try listing(), Self.bytes(path))
        let verify = try ProductProcess.run("coexistctl", ["verify", path])
        #expect(verify.status == 1, "\(verify.stderr)")
        #expect(verify.stderr.contains("the bridge has never run on this store"), "\(verify.stderr)")
        #expect(try ProductProcess.run("coexistctl", ["inspect", path, "--json"]).status == 0)
        #expect(try listing() == before.0)
        #expect(Self.bytes(path) == before.1)
    }
}
