import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import CoexistStore
import TestSupport
import Testing

/// The CHECK constraints of the tables coexist creates hold every value they held as lists, and none is
/// checked through a temporary table: SQLite 3.40 compiles `x IN (a, b, c)` (three values or more) into a
/// temporary table it fills for every row written.
@Suite struct CheckConstraintTests {
    /// A hierarchy of three concrete entities: its table's `kind` takes three values.
    static let zooXML = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            <entity name="Animal" representedClassName="Animal" syncable="YES">
                <attribute name="name" optional="YES" attributeType="String"/>
            </entity>
            <entity name="Dog" representedClassName="Dog" parentEntity="Animal" syncable="YES"/>
            <entity name="Cat" representedClassName="Cat" parentEntity="Animal" syncable="YES"/>
        </model>
        """

    /// Whether the statement `sql` opens a temporary table.
    static func opensTemporaryTable(_ path: String, _ sql: String) throws -> Bool {
        try RawSQLite.rows(path, "EXPLAIN " + sql).contains { $0[1] == .text("OpenEphemeral") }
    }

    @Test func kindAndChangeTypeAreCheckedWithoutATemporaryTable() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write("Zoo.contents", Array(Self.zooXML.utf8))
        let model = try XCDataModelReader.read(path: file)
        let legacy = try StoreCreator.create(path: directory.file("Zoo.sqlite"), model: model)
        let store = try NewStore(path: legacy.path, model: model)
        try store.createSchema()
        let table = try #require(store.schema.entities["Dog"]?.table)
        #expect(try !Self.opensTemporaryTable(legacy.path, "INSERT INTO \(SQLIdentifier.quoted(table)) DEFAULT VALUES"))
        #expect(try !Self.opensTemporaryTable(legacy.path, "INSERT INTO coexist_change DEFAULT VALUES"))
        // The list a constraint of the old form would have opened a table for (the check above can fail).
        #expect(try Self.opensTemporaryTable(legacy.path, "SELECT 1 WHERE 5 IN (1, 2, 3)"))

        let connection = try Connection(path: legacy.path, options: OpenOptions(access: .readWriteCreate))
        let insert = "INSERT INTO \(SQLIdentifier.quoted(table)) (id, kind, name) VALUES (?, ?, 'x')"
        for (index, kind) in ["Animal", "Dog", "Cat"].enumerated() {
            try connection.run(insert, [.text("00000000-0000-0000-0000-00000000000\(index)"), .text(kind)])
        }
        #expect(throws: (any Error).self) {
            try connection.run(insert, [.text("00000000-0000-0000-0000-000000000009"), .text("Cow")])
        }
        let change = "INSERT INTO coexist_change (token, type, entity, object_id) VALUES (1, ?, 'Dog', 'x')"
        for type in [0, 1, 2] { try connection.run(change, [.integer(Int64(type))]) }
        for type in [-1, 3] {
            #expect(throws: (any Error).self) { try connection.run(change, [.integer(Int64(type))]) }
        }
    }

    /// No table the new schema adds to a real store opens a temporary table for a row written to it.
    @Test(arguments: Fixtures.allStores) func noNewTableChecksThroughATemporaryTable(fixture: String) throws {
        let directory = try TemporaryDirectory()
        let copy = try directory.copy(fixture)
        let before = Set(
            try RawSQLite.rows(copy, "SELECT name FROM sqlite_master WHERE type = 'table'").compactMap {
                $0[0].textValue
            }
        )
        let model = try #require(try LegacyStore(path: copy).model)
        try NewStore(path: copy, model: model).createSchema()
        let added = try RawSQLite.rows(copy, "SELECT name FROM sqlite_master WHERE type = 'table'").compactMap {
            $0[0].textValue
        }.filter { !before.contains($0) }
        #expect(added.contains("coexist_change"))
        for table in added {
            let sql = "INSERT INTO \(SQLIdentifier.quoted(table)) DEFAULT VALUES"
            #expect(try !Self.opensTemporaryTable(copy, sql), "\(table)")
        }
    }
}
