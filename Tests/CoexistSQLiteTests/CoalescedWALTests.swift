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
            CREATE UNIQUE INDEX t_a ON t (a); CREATE INDEX t_b ON t (b); CREATE INDEX t_c ON t (c);
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

    /// SQLite's own library on its default VFS, in another process, reads `query` from the file as it is
    /// (through the WAL index) and from a copy of the database and its WAL without the index (recovery
    /// reads every frame and checks its checksum): `PRAGMA integrity_check` says ok and the query gives
    /// `expected` both times.
    private func expectStockSQLite(
        reads path: String,
        _ query: String,
        _ expected: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let copy = try TemporaryDirectory()
        try FileManager.default.copyItem(atPath: path, toPath: copy.file("copy.sqlite"))
        try FileManager.default.copyItem(atPath: path + "-wal", toPath: copy.file("copy.sqlite-wal"))
        for file in [path, copy.file("copy.sqlite")] {
            let check = try ProductProcess.run(
                path: "python3",
                [
                    "-c",
                    """
                    import sqlite3, sys
                    c = sqlite3.connect(sys.argv[1])
                    print(c.execute('PRAGMA integrity_check').fetchone()[0], c.execute(sys.argv[2]).fetchone())
                    """,
                    file, query,
                ]
            )
            #expect(check.stdout == "ok \(expected)\n", "\(file): \(check.stderr)", sourceLocation: sourceLocation)
        }
    }

    @Test func commitsOfEverySizeAcrossTheBuffersBoundRecover() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("a.sqlite")
        let connection = try Connection(path: path, options: OpenOptions(access: .readWriteCreate))
        try connection.execute("CREATE TABLE b (id INTEGER PRIMARY KEY, v BLOB)")
        // A 3,000-byte row takes a page of its own: a commit of k rows writes about k + 1 frames, so the
        // commits below end on every frame of the 30-frame buffer and past it.
        var total = 0
        for rows in 1...70 {
            try connection.write {
                for _ in 0..<rows {
                    try connection.run(
                        "INSERT INTO b (v) VALUES (?)",
                        [.blob([UInt8](repeating: UInt8(rows), count: 3_000))]
                    )
                }
            }
            total += rows
        }
        try expectStockSQLite(reads: path, "SELECT count(*), sum(length(v)) FROM b", "(\(total), \(total * 3_000))")
    }

    @Test func aFailedWriteRollsTheWholeTransactionBackAndFreesTheWriteLock() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("a.sqlite")
        let connection = try Connection(path: path, options: OpenOptions(access: .readWriteCreate))
        try indexedTable(connection)
        try connection.run("INSERT INTO u (v) VALUES ('before')")
        try connection.execute("PRAGMA cache_size=20")
        let other = try Connection(path: path)
        // Ten rows: the one run, written by the commit. Two thousand: a run written as the cache spills
        // mid-transaction (the fourth), or one written when a multi-row update reads back what spilled (its
        // statement alone would roll back on a full disk, and the commit then publish frames never written).
        for (rows, runs, update) in [(10, 0, false), (2_000, 3, false), (2_000, 0, true)] {
            if !update { CoalescingVFS.failWrite(ofWALAt: path + "-wal", after: runs) }
            #expect(throws: SQLiteError.self) {
                try connection.write {
                    for index in 0..<rows {
                        // A failed statement the caller goes past must not let the commit go through.
                        try? connection.run(
                            "INSERT INTO t (a, b, c) VALUES (?, ?, ?)",
                            [.text("\(index) \(String(repeating: "x", count: 200))"), .text("b"), .integer(1)]
                        )
                    }
                    if update {
                        CoalescingVFS.failWrite(ofWALAt: path + "-wal", after: runs)
                        try? connection.run("UPDATE t SET a = a || '!'")
                    }
                    try connection.run("INSERT INTO u (v) VALUES ('lost')")
                }
            }
            #expect(try other.scalar("SELECT count(*) FROM t").integerValue == 0)
            // The write lock is free: another connection writes, then this one again.
            try other.write { try other.run("INSERT INTO u (v) VALUES ('other')") }
            try connection.write { try connection.run("INSERT INTO u (v) VALUES ('again')") }
        }
        try expectStockSQLite(
            reads: path,
            "SELECT group_concat(v, ' ') FROM (SELECT v FROM u ORDER BY id)",
            "('before other again other again other again',)"
        )
        #expect(try other.scalar("SELECT count(*) FROM t").integerValue == 0)
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
        try expectStockSQLite(reads: path, "SELECT count(*), sum(c) FROM t", "(5000, \((0..<5_000).reduce(0, +)))")
    }
}
