import CoexistSQLite
import TestSupport
import Testing

@Suite struct CoreDataFunctionsTests {
    /// SampleModel2's derived-attribute triggers call Core Data's functions: without them a write fails.
    @Test func derivedAttributeTriggersNeedTheFunctions() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.copy(Fixtures.sampleModel2V1)
        let plain = try Connection(path: path, options: OpenOptions(coreDataTriggerFunctions: false))
        let error = #expect(throws: SQLiteError.self) {
            try plain.run("UPDATE ZPAGE SET ZBOOK = ZBOOK WHERE Z_PK = (SELECT min(Z_PK) FROM ZPAGE)")
        }
        #expect(error?.message.contains("NSCoreDataDATriggerUpdatedAffectedObjectValue") == true)

        let connection = try Connection(path: path)
        let book = try connection.scalar("SELECT ZBOOK FROM ZPAGE WHERE ZBOOK IS NOT NULL LIMIT 1")
        let before = try connection.scalar("SELECT ZPAGESCOUNT FROM ZBOOK WHERE Z_PK = ?", [book])
        try connection.write {
            try connection.run(
                "INSERT INTO ZPAGE (Z_ENT, Z_OPT, ZBOOK, Z1_BOOK, ZNUMBER) VALUES (4, 1, ?, 1, 9999)",
                [book]
            )
        }
        let after = try connection.scalar("SELECT ZPAGESCOUNT FROM ZBOOK WHERE Z_PK = ?", [book])
        #expect(after.integerValue == (before.integerValue ?? 0) + 1)
    }
}
