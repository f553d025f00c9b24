import CoexistSQLite
import Testing

@Suite struct SQLIdentifierTests {
    @Test(arguments: [("ZTASK", "\"ZTASK\""), ("a\"b", "\"a\"\"b\""), ("", "\"\"")])
    func quoting(name: String, quoted: String) {
        #expect(SQLIdentifier.quoted(name) == quoted)
    }

    @Test(arguments: ["ZTASK", "_x1", "task_id"]) func plainNames(name: String) {
        #expect(SQLIdentifier.isPlain(name))
    }

    @Test(arguments: ["", "1abc", "a b", "a\"b", "é", "a;b", String(repeating: "a", count: 129)])
    func rejectedNames(name: String) {
        #expect(!SQLIdentifier.isPlain(name))
        #expect(throws: SQLiteError.self) { try SQLIdentifier.validate(name) }
    }
}
