import CoexistSQLite
import Foundation
import TestSupport
import Testing

@Suite struct CheckpointTests {
    /// A passive checkpoint leaves the WAL to grow while a reader stays on it; a restarting one waits for
    /// the reader within its bound (false when it ran out), and once it succeeds the next commit writes the
    /// WAL from its start.
    @Test func aRestartingCheckpointLetsTheNextCommitStartTheWALOver() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("a.sqlite")
        let writer = try Connection(path: path, options: OpenOptions(access: .readWriteCreate))
        try writer.execute("CREATE TABLE t (v)")
        let checkpointer = try Connection(path: path)
        checkpointer.manageCheckpoints()
        let reader = try Connection(path: path)
        func commit(_ rows: Int) throws {
            try writer.write {
                for _ in 0..<rows { try writer.run("INSERT INTO t VALUES (randomblob(3000))") }
            }
        }
        func walFrames() throws -> Int { try checkpointer.checkpoint().frames }
        try commit(50)
        try reader.execute("BEGIN")
        _ = try reader.rows("SELECT count(*) FROM t")
        try commit(50)
        let before = try walFrames()
        #expect(before > 50)
        let started = Date()
        #expect(try !checkpointer.restartingCheckpoint(waitingAtMost: 30))
        #expect(Date().timeIntervalSince(started) < 1)
        try commit(1)
        #expect(try walFrames() > before, "the reader holds the WAL: it grew")
        try reader.execute("COMMIT")
        #expect(try checkpointer.restartingCheckpoint(waitingAtMost: 30))
        try commit(1)
        #expect(try walFrames() < 10, "the next commit started the WAL over")
        #expect(try writer.scalar("SELECT count(*) FROM t") == .integer(102))
    }
}
