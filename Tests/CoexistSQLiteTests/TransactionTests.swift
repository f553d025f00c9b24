import CoexistSQLite
import Foundation
import TestSupport
import Testing

struct Boom: Error {}

@Suite struct TransactionTests {
    @Test func writeCommitsOrRollsBack() throws {
        let directory = try TemporaryDirectory()
        let connection = try Connection(
            path: directory.file("a.sqlite"),
            options: OpenOptions(access: .readWriteCreate)
        )
        try connection.execute("CREATE TABLE t (v)")
        try connection.write { try connection.run("INSERT INTO t VALUES (1)") }
        #expect(throws: Boom.self) {
            try connection.write {
                try connection.run("INSERT INTO t VALUES (2)")
                throw Boom()
            }
        }
        #expect(connection.isAutocommit)
        #expect(try connection.rows("SELECT v FROM t").map { $0[0] } == [.integer(1)])
    }

    @Test func savepointRollsBackOnlyItsOwnWork() throws {
        let directory = try TemporaryDirectory()
        let connection = try Connection(
            path: directory.file("a.sqlite"),
            options: OpenOptions(access: .readWriteCreate)
        )
        try connection.execute("CREATE TABLE t (v)")
        try connection.write {
            try connection.run("INSERT INTO t VALUES (1)")
            #expect(throws: Boom.self) {
                try connection.savepoint("inner") {
                    try connection.run("INSERT INTO t VALUES (2)")
                    throw Boom()
                }
            }
            try connection.savepoint("kept") { try connection.run("INSERT INTO t VALUES (3)") }
        }
        #expect(try connection.rows("SELECT v FROM t ORDER BY v").map { $0[0] } == [.integer(1), .integer(3)])
    }

    @Test func savepointNamesMustBePlainIdentifiers() throws {
        let directory = try TemporaryDirectory()
        let connection = try Connection(
            path: directory.file("a.sqlite"),
            options: OpenOptions(access: .readWriteCreate)
        )
        #expect(throws: SQLiteError.self) { try connection.savepoint("x\"; DROP TABLE t; --") {} }
    }

    @Test func busyWriterTimesOutWithBusyAfterBackoff() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("a.sqlite")
        let holder = try Connection(path: path, options: OpenOptions(access: .readWriteCreate))
        try holder.execute("CREATE TABLE t (v)")
        let waiter = try Connection(path: path, options: OpenOptions(busyTimeoutMilliseconds: 150))
        try holder.execute("BEGIN IMMEDIATE")
        let started = ContinuousClock.now
        let error = #expect(throws: SQLiteError.self) {
            try waiter.write { try waiter.run("INSERT INTO t VALUES (1)") }
        }
        let waited = ContinuousClock.now - started
        #expect(error?.isBusy == true)
        #expect(waited >= .milliseconds(140))
        try holder.execute("COMMIT")
    }

    @Test func busyWriterProceedsOnceTheLockIsReleased() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("a.sqlite")
        let setup = try Connection(path: path, options: OpenOptions(access: .readWriteCreate))
        try setup.execute("CREATE TABLE t (v)")
        let locked = DispatchSemaphore(value: 0)
        let thread = Thread {
            guard let holder = try? Connection(path: path) else { return }
            try? holder.execute("BEGIN IMMEDIATE; INSERT INTO t VALUES (1);")
            locked.signal()
            Thread.sleep(forTimeInterval: 0.1)
            try? holder.execute("COMMIT")
        }
        thread.start()
        locked.wait()
        let waiter = try Connection(path: path, options: OpenOptions(busyTimeoutMilliseconds: 5_000))
        try waiter.write { try waiter.run("INSERT INTO t VALUES (2)") }
        #expect(try waiter.rows("SELECT v FROM t ORDER BY v").map { $0[0] } == [.integer(1), .integer(2)])
    }
}
