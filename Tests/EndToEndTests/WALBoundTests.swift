import CoexistSQLite
import Foundation
import Synchronization
import TestSupport
import Testing

/// An app committing steadily while coexistd mirrors each commit and a reader is always on the WAL: the
/// daemon's checkpoints (passive past 1,000 pages, restarting past 2,000) keep the WAL within about twice
/// SQLite's auto-checkpoint bound instead of growing with every commit.
@Suite struct WALBoundTests {
    @Test func theWALStaysBoundedWhileAnAppCommitsSteadily() throws {
        let directory = try TemporaryDirectory()
        let path = try SharedStore.create(in: directory).legacy.path
        let daemon = try DaemonProcess(database: path, directory: directory)
        let client = try SocketClient(path: daemon.socket)
        // A reader that is always on the WAL, as an app's contexts following the file are: each read
        // transaction lasts a millisecond, and the next begins at once.
        let done = Atomic<Bool>(false)
        let reader = Thread {
            guard let connection = try? Connection(path: path, options: .readOnly) else { return }
            while !done.load(ordering: .relaxed) {
                _ = try? connection.read {
                    _ = try connection.rows("SELECT count(*) FROM ZTASK")
                    usleep(1_000)
                }
            }
        }
        reader.start()
        defer { done.store(true, ordering: .relaxed) }
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: ProductProcess.productsDirectory + "/coexist-test-helper")
        writer.arguments = ["new-writer", path, "1500", "app", "1000"]
        writer.standardOutput = FileHandle.nullDevice
        try writer.run()
        writer.waitUntilExit()
        #expect(writer.terminationStatus == 0)
        let deadline = Date().addingTimeInterval(60)
        while try client.request(#"{"op":"status"}"#)["lag"] as? Int != 0 && Date() < deadline { usleep(50_000) }
        let bytes = try #require(try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int)
        let walPages = bytes / 4_120  // a frame: its 24-byte header and a 4,096-byte page
        // Measured: 2,300 to 2,700 pages; with passive checkpoints past 4,000 pages only (as before), 5,600 to
        // 6,600.
        #expect(walPages < 4_000, "\(walPages) pages in the WAL")
        let code = daemon.stop()
        #expect(code == 0, "\(daemon.log.suffix(8_000))")
    }
}
