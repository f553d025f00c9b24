import CoexistSQLite
import TestSupport
import Testing

/// A schema-dependent result is reused only while the schema is the one it was computed on.
@Suite struct SchemaMemoTests {
    private func tableCount(_ connection: Connection, _ runs: inout Int) throws -> Int64 {
        try connection.schemaDependent("tables") { () throws(SQLiteError) in
            runs += 1
            return try connection.scalar("SELECT count(*) FROM sqlite_master WHERE type = 'table'").integerValue ?? -1
        }
    }

    @Test func reusedUntilAnotherConnectionChangesTheSchema() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("memo.sqlite")
        let connection = try Connection(path: path, options: OpenOptions(access: .readWriteCreate))
        let other = try Connection(path: path)
        try connection.execute("CREATE TABLE a (x)")
        var runs = 0
        #expect(try tableCount(connection, &runs) == 1)
        #expect(try tableCount(connection, &runs) == 1)
        #expect(runs == 1)
        try other.execute("CREATE TABLE b (x)")
        #expect(try tableCount(connection, &runs) == 2)
        #expect(runs == 2)
    }

    @Test func aComputationThatChangesTheSchemaIsNotKept() throws {
        let directory = try TemporaryDirectory()
        let connection = try Connection(
            path: directory.file("memo.sqlite"),
            options: OpenOptions(access: .readWriteCreate)
        )
        var runs = 0
        for _ in 0..<2 {
            try connection.schemaDependent("create") { () throws(SQLiteError) in
                runs += 1
                try connection.execute("CREATE TABLE IF NOT EXISTS t (x)")
            }
        }
        #expect(runs == 2, "the first run created the table, so the second checks again")
        try connection.schemaDependent("create") { () throws(SQLiteError) in runs += 1 }
        #expect(runs == 2, "the second run changed nothing: its result is kept")

        // Created inside a transaction that rolls back: the table is gone and the memo must not say otherwise.
        var created = 0
        try connection.execute("BEGIN IMMEDIATE")
        try connection.schemaDependent("u") { () throws(SQLiteError) in
            created += 1
            try connection.execute("CREATE TABLE IF NOT EXISTS u (x)")
        }
        try connection.execute("ROLLBACK")
        try connection.schemaDependent("u") { () throws(SQLiteError) in
            created += 1
            try connection.execute("CREATE TABLE IF NOT EXISTS u (x)")
        }
        #expect(created == 2)
        #expect(try connection.tableExists("u"))
    }
}
