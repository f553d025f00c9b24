import CoexistHistory
import CoexistModel
import CoexistSQLite
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
            properties: ["title", "a/b", "q\"x"]
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
                "SELECT id, type, entity, object_id, properties, tombstone FROM coexist_change WHERE token = ? ORDER BY id",
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
}
