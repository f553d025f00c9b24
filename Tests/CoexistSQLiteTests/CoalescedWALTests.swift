import CoexistSQLite
import Foundation
import TestSupport
import Testing

/// The WAL frames of a commit go to the file in one write, and what is written is what SQLite wrote.
@Suite struct CoalescedWALTests {
    /// The write system calls this thread made so far (`syscw` of `/proc/thread-self/io`).
    private func writeCalls() throws -> Int {
        let text = try String(contentsOfFile: "/proc/thread-self/io", encoding: .utf8)
        let line = text.split(separator: "\n").first { $0.hasPrefix("syscw:") }
        return Int(line?.split(separator: " ").last ?? "") ?? -1
    }

    /// A table with three indexes: one row touches at least eight pages.
    private func indexedTable(_ connection: Connection) throws {
        try connection.execute(
            """
            CREATE TABLE t (id INTEGER PRIMARY KEY, a TEXT, b TEXT, c INTEGER);
            CREATE INDEX t_a ON t (a); CREATE INDEX t_b ON t (b); CREATE INDEX t_c ON t (c);
            CREATE TABLE u (id INTEGER PRIMARY KEY, v TEXT); CREATE INDEX u_v ON u (v);
            """
        )
    }

    @Test func aCommitsFramesGoToTheFileInOneWrite() throws {
        let directory = try TemporaryDirectory()
        let connection = try Connection(
            path: directory.file("a.sqlite"),
            options: OpenOptions(access: .readWriteCreate)
        )
        try indexedTable(connection)
        // An empty WAL: the commit below writes the WAL header and its frames from the start.
        #expect(try connection.restartingCheckpoint(waitingAtMost: 1_000))
        let writesBefore = try writeCalls()
        try connection.write {
            try connection.run("INSERT INTO t (a, b, c) VALUES ('x', 'y', 1)")
            try connection.run("INSERT INTO u (v) VALUES ('z')")
        }
        let writes = try writeCalls() - writesBefore
        #expect(writesBefore >= 0)
        let frames = try connection.rows("PRAGMA wal_checkpoint(PASSIVE)").first?[1].integerValue ?? 0
        // Two calls per frame (header, page) without coalescing.
        #expect(frames >= 6)
        #expect(writes <= 2, "\(writes) write calls for \(frames) frames")
    }

    @Test func aTransactionLargerThanTheBufferSpillsReadsBackAndCommitsWhole() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("a.sqlite")
        let connection = try Connection(path: path, options: OpenOptions(access: .readWriteCreate))
        try indexedTable(connection)
        // A cache of 20 pages: the transaction writes frames to the WAL before its commit, then reads them.
        try connection.execute("PRAGMA cache_size=20")
        let text = String(repeating: "é", count: 150)
        func insertRows(_ range: Range<Int>) throws {
            for index in range {
                try connection.run(
                    "INSERT INTO t (a, b, c) VALUES (?, ?, ?)",
                    [.text("\(index)\(text)"), .text("\(text)\(index)"), .integer(Int64(index))]
                )
            }
        }
        // A rolled-back transaction first: its spilled frames are never read.
        try? connection.write {
            try insertRows(0..<3_000)
            throw CancellationError()
        }
        try connection.write {
            try insertRows(0..<5_000)
            let sum = try connection.scalar("SELECT sum(c), count(*) FROM t WHERE a LIKE '4%'").integerValue
            #expect(sum == (0..<5_000).filter { String($0).hasPrefix("4") }.reduce(0, +))
        }
        #expect(try connection.scalar("SELECT count(*) FROM t").integerValue == 5_000)
        // Another connection, and SQLite on its default VFS in another process, read the same.
        let other = try Connection(path: path, options: .readOnly)
        #expect(try other.scalar("SELECT sum(c) FROM t").integerValue == Int64((0..<5_000).reduce(0, +)))
        let check = try ProductProcess.run(
            path: "python3",
            [
                "-c",
                """
                import sqlite3, sys
                c = sqlite3.connect('file:' + sys.argv[1] + '?mode=ro', uri=True)
                print(c.execute('PRAGMA integrity_check').fetchone()[0], c.execute('SELECT count(*), sum(c) FROM t').fetchone())
                """,
                path,
            ]
        )
        #expect(check.stdout == "ok (5000, \((0..<5_000).reduce(0, +)))\n", "\(check.stderr)")
    }
}
