import CoexistHistory
import CoexistModel
import CoexistSQLite
import Foundation
import TestSupport
import Testing

/// The new schema's change log written several entries at once is what it is written one at a time: the
/// same rows (JSON of the changed properties and of the tombstone byte for byte, names that need escaping
/// included), ids in order.
@Suite struct CompanionChangesTests {
    static let entries = [
        CompanionChanges.Entry(type: .insert, entity: "Task", objectID: "a\"b\\c"),
        CompanionChanges.Entry(
            type: .update,
            entity: "Ta\u{1}sk",
            objectID: "id/2",
            properties: ["title", "a/b", "q\"x"],
            values: RecordedValues(
                values: ["title": .string("a\"b\n"), "category": .null],
                members: ["tags": ["t1", "t\"2"]],
                counts: ["notes": 1_001]
            )
        ),
        CompanionChanges.Entry(
            type: .delete,
            entity: "Task",
            objectID: "é3",
            tombstone: ["title": .string("line\nbreak \u{7}"), "when": .date(1e-7), "n": .integer(Int64.min)]
        ),
    ]

    @Test func severalAtOnceEqualsOneAtATime() throws {
        let directory = try TemporaryDirectory()
        let connection = try Connection(
            path: directory.file("c.sqlite"),
            options: OpenOptions(access: .readWriteCreate)
        )
        try CompanionChanges.ensure(connection)
        let together = try CompanionChanges.write(Self.entries, token: 7, connection: connection)
        var alone: [HistoryChange] = []
        for entry in Self.entries { alone += try CompanionChanges.write([entry], token: 8, connection: connection) }
        let rows = { (token: Int64) throws -> [[SQLiteValue]] in
            try connection.rows(
                "SELECT id, type, entity, object_id, properties, tombstone, vals FROM coexist_change WHERE token = ? ORDER BY id",
                [.integer(token)]
            )
        }
        let (first, second) = (try rows(7), try rows(8))
        #expect(first.map { Array($0.dropFirst()) } == second.map { Array($0.dropFirst()) })
        #expect(first.map { $0[0].integerValue } == together.map(\.changeID))
        #expect(second.map { $0[0].integerValue } == alone.map(\.changeID))
        #expect(together.map(\.changeID) == [1, 2, 3])
        let withoutIDs = { (changes: [HistoryChange]) in
            changes.map { change -> HistoryChange in
                var copy = change
                copy.changeID = 0
                return copy
            }
        }
        #expect(withoutIDs(together) == withoutIDs(alone))
    }

    /// A file whose change log predates `vals` gets the column on its next save; its older rows read back
    /// without values, and a reader that wants values reads a file without the column.
    @Test func anOlderLogGainsTheValuesColumn() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("old.sqlite")
        let connection = try Connection(path: path, options: OpenOptions(access: .readWriteCreate))
        try connection.execute(
            "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)"
        )
        try HistoryTables.ensure(connection, tombstones: 0)
        try connection.execute(
            """
            CREATE TABLE coexist_change (id INTEGER PRIMARY KEY, token INTEGER NOT NULL,
                type INTEGER NOT NULL CHECK (type IN (0, 1, 2)), entity TEXT NOT NULL, object_id TEXT NOT NULL,
                properties TEXT, tombstone TEXT) STRICT
            """
        )
        try connection.run(
            "INSERT INTO ATRANSACTION (Z_PK, Z_ENT, ZTIMESTAMP) VALUES (1, 16002, 0), (2, 16002, 0)"
        )
        try connection.run(
            "INSERT INTO coexist_change (token, type, entity, object_id) VALUES (1, 0, 'Task', 'old')"
        )
        #expect(try !CompanionChanges.recordsValues(connection))
        let decoder = NoLegacyDecoder()
        var reader = try HistoryReader(connection: connection, decoder: decoder)
        reader.readsRecordedValues = true
        #expect(try reader.transactions(after: 0).flatMap(\.changes).map(\.objectID) == ["old"])

        try CompanionChanges.ensure(connection)
        #expect(try CompanionChanges.recordsValues(connection))
        let values = RecordedValues(values: ["title": .string("new")])
        _ = try CompanionChanges.write(
            [CompanionChanges.Entry(type: .insert, entity: "Task", objectID: "new", values: values)],
            token: 2,
            connection: connection
        )
        let changes = try HistoryReader(connection: connection, decoder: decoder).transactions(after: 0)
            .flatMap(\.changes)
        #expect(changes.map(\.recordedValues) == [nil, nil])  // not asked for
        #expect(try reader.transactions(after: 0).flatMap(\.changes).map(\.recordedValues) == [nil, values])
    }

    /// The JSON a save writes for its values reads back, through `Codable`, as the values it wrote: every
    /// kind of value, names and texts that need escaping, non-finite numbers.
    @Test func recordedValuesReadBackAsWritten() throws {
        let values = RecordedValues(
            values: [
                "null": .null, "int": .integer(Int64.min), "bool": .boolean(true), "double": .double(-1.5e-300),
                "whole": .double(3), "inf": .double(-.infinity), "date": .date(817_727_875.645_314_1),
                "decimal": .decimal("10.11"), "text": .string("q\"\\ line\n\u{1} é 🎉"), "uri": .uri("x:/y"),
                "uuid": .uuid(Array(0..<16)), "binary": .binary([0, 255, 7]), "transformable": .transformable([]),
                "external": .externalReference([1]), "na\"me": .string(""),
            ],
            members: ["tags": ["a", "b\"c"], "empty": []],
            counts: ["notes": 1_001]
        )
        let decoded = try JSONDecoder().decode(RecordedValues.self, from: Data(values.json.utf8))
        #expect(decoded == values)
        let nan = RecordedValues(values: ["nan": .double(.nan)]).json
        let read = try JSONDecoder().decode(RecordedValues.self, from: Data(nan.utf8))
        guard case .double(let number)? = read.values["nan"] else {
            Issue.record("nan read back as \(String(describing: read.values["nan"]))")
            return
        }
        #expect(number.isNaN)
    }
}
