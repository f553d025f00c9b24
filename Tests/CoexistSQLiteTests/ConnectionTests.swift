import CoexistSQLite
import Foundation
import TestSupport
import Testing

@Suite struct ConnectionTests {
    /// A new database `a.sqlite` in `directory`.
    private static func open(_ directory: TemporaryDirectory) throws -> Connection {
        try Connection(path: directory.file("a.sqlite"), options: OpenOptions(access: .readWriteCreate))
    }

    @Test func openingAppliesWALSynchronousNormalAndForeignKeys() throws {
        let directory = try TemporaryDirectory()
        let connection = try Self.open(directory)
        #expect(try connection.scalar("PRAGMA journal_mode").textValue == "wal")
        #expect(try connection.scalar("PRAGMA synchronous").integerValue == 1)
        #expect(try connection.scalar("PRAGMA foreign_keys").integerValue == 1)
        #expect(try connection.scalar("PRAGMA temp_store").integerValue == 2)
    }

    @Test func aQueryRunInTheBodyOfTheSameQueryLeavesTheOuterOneWhereItWas() throws {
        let directory = try TemporaryDirectory()
        let connection = try Self.open(directory)
        try connection.execute("CREATE TABLE t (v); INSERT INTO t VALUES (1), (2), (3)")
        let query = "SELECT v FROM t ORDER BY v"
        var outer: [Int64] = []
        var inner: [[Int64]] = []
        try connection.forEachRow(query) { row in
            outer.append(row[0].integerValue ?? 0)
            if outer.count <= 2 {
                inner.append(try connection.rows(query).map { $0[0].integerValue ?? 0 })
                #expect(try connection.scalar(query).integerValue == 1)
            }
        }
        #expect(outer == [1, 2, 3], "the outer run neither restarted nor stopped")
        #expect(inner == [[1, 2, 3], [1, 2, 3]])
        // The cached statement serves the next run.
        #expect(try connection.rows(query).count == 3)
    }

    @Test func everyStorageClassRoundTrips() throws {
        let directory = try TemporaryDirectory()
        let connection = try Self.open(directory)
        try connection.execute("CREATE TABLE t (v)")
        let values: [SQLiteValue] = [
            .null, .integer(.min), .integer(.max), .integer(0), .real(-0.5), .real(.infinity), .real(1e-300),
            .text(""), .text("héllo ✓ \u{1F600}"), .text("nul\u{0}inside"), .blob([]), .blob([0, 1, 2, 255]),
            .blob([UInt8](repeating: 7, count: 100_000)),
        ]
        for value in values { try connection.run("INSERT INTO t (v) VALUES (?)", [value]) }
        let read = try connection.rows("SELECT v FROM t ORDER BY rowid").map { $0[0] }
        #expect(read == values)
        let classes = try connection.rows("SELECT typeof(v) FROM t ORDER BY rowid").compactMap { $0[0].textValue }
        #expect(classes == values.map(\.storageClass))
    }

    @Test func textIsReadWithoutAStringAndNullWithoutAValue() throws {
        let directory = try TemporaryDirectory()
        let connection = try Self.open(directory)
        var seen: [(isNull: Bool, text: [UInt8]?)] = []
        try connection.forEachRow("SELECT 'héllo', NULL, 7, x'0102', ''") { row in
            for index in 0..<row.count { seen.append((row.isNull(index), row.withText(index) { Array($0) })) }
        }
        #expect(seen.map(\.isNull) == [false, true, false, false, false])
        #expect(seen.map(\.text) == [Array("héllo".utf8), nil, nil, nil, []])
    }

    @Test func typedReadsAnswerAsTheValueDoesForEveryStorageClass() throws {
        let directory = try TemporaryDirectory()
        let connection = try Self.open(directory)
        var typed: [(Int64?, String?)] = []
        var byValue: [(Int64?, String?)] = []
        try connection.forEachRow("SELECT 'héllo', NULL, 7, 7.5, x'0102', '', '12', -9223372036854775808") { row in
            for index in 0..<row.count {
                typed.append((row.integer(index), row.text(index)))
                byValue.append((row[index].integerValue, row[index].textValue))
            }
        }
        #expect(typed.map(\.0) == byValue.map(\.0))
        #expect(typed.map(\.1) == byValue.map(\.1))
        #expect(typed.map(\.0) == [nil, nil, 7, nil, nil, nil, nil, Int64.min])
        #expect(typed.map(\.1) == ["héllo", nil, nil, nil, nil, "", "12", nil])
    }

    @Test func errorsCarryCodeMessageAndSQLButNotValues() throws {
        let directory = try TemporaryDirectory()
        let connection = try Self.open(directory)
        try connection.execute("CREATE TABLE t (v TEXT UNIQUE)")
        try connection.run("INSERT INTO t (v) VALUES (?)", [.text("secret-value")])
        let error = #expect(throws: SQLiteError.self) {
            try connection.run("INSERT INTO t (v) VALUES (?)", [.text("secret-value")])
        }
        #expect(error?.extendedCode == 2067)  // SQLITE_CONSTRAINT_UNIQUE
        #expect(error?.isConstraintViolation == true)
        #expect(error?.sql == "INSERT INTO t (v) VALUES (?)")
        #expect(error?.message.contains("UNIQUE constraint failed") == true)
        #expect(error?.description.contains("secret-value") == false)
    }

    @Test func syntaxErrorsNameTheStatement() throws {
        let directory = try TemporaryDirectory()
        let connection = try Self.open(directory)
        let error = #expect(throws: SQLiteError.self) { try connection.prepare("SELEC 1") }
        #expect(error?.primaryCode == 1)
        #expect(error?.sql == "SELEC 1")
    }

    @Test func argumentCountMismatchIsAnError() throws {
        let directory = try TemporaryDirectory()
        let connection = try Self.open(directory)
        #expect(throws: SQLiteError.self) { try connection.run("SELECT ?, ?", [.integer(1)]) }
    }

    @Test func cachedStatementsAreReused() throws {
        let directory = try TemporaryDirectory()
        let connection = try Self.open(directory)
        let first = try connection.cachedStatement("SELECT 1")
        let second = try connection.cachedStatement("SELECT 1")
        #expect(first === second)
        #expect(try connection.scalar("SELECT ? + 1", [.integer(41)]) == .integer(42))
        #expect(try connection.scalar("SELECT ? + 1", [.integer(1)]) == .integer(2))
    }

    @Test func openingAFileThatIsNotADatabaseFails() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("text.sqlite", Array(String(repeating: "not a database ", count: 100).utf8))
        let error = #expect(throws: SQLiteError.self) { try Connection(path: path, options: .readOnly) }
        #expect(error?.primaryCode == 26)  // SQLITE_NOTADB
    }

    @Test func dataVersionChangesWhenAnotherConnectionCommits() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("a.sqlite")
        let watcher = try Connection(path: path, options: OpenOptions(access: .readWriteCreate))
        let writer = try Connection(path: path)
        try writer.execute("CREATE TABLE t (v)")
        let before = try watcher.dataVersion()
        try writer.run("INSERT INTO t VALUES (1)")
        #expect(try watcher.dataVersion() != before)
    }
}
