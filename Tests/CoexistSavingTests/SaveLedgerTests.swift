import CoexistSQLite
import TestSupport
import Testing

@testable import CoexistSaving

/// A save's bookkeeping: a failed operation leaves ledger and file as they were before it; a finished save,
/// or one outside its transaction, refuses operations.
@Suite struct SaveLedgerTests {
    struct Refused: Error {}
    struct Failed: Error {}

    let directory: TemporaryDirectory
    let connection: Connection

    init() throws {
        directory = try TemporaryDirectory()
        connection = try Connection(
            path: directory.file("ledger.sqlite"),
            options: OpenOptions(access: .readWriteCreate)
        )
        try connection.execute("CREATE TABLE item (name TEXT)")
    }

    @Test func aFailedOperationRestoresTheLedgerAndTheRows() throws {
        let ledger = SaveLedger<String, String>()
        var begun = 0
        var undone = 0
        var ended = 0
        try connection.write {
            try ledger.atomically(on: connection, refusal: { Refused() }) {
                ledger.record("a", "insert")
                ledger.record("b", "insert")
                ledger.record("c", "update")
                try connection.run("INSERT INTO item VALUES ('a')")
            }
            #expect(throws: Failed.self) {
                try ledger.atomically(
                    on: connection,
                    refusal: { Refused() },
                    begin: { begun += 1 },
                    undo: { undone += 1 },
                    end: { ended += 1 }
                ) {
                    ledger.record("d", "insert")
                    ledger.record("c", "update title")
                    ledger.forget("b")
                    ledger.markDeleted("b")
                    ledger.record("e", "insert")
                    // A nested operation shares the outer one's savepoint and journal.
                    try ledger.atomically(on: connection, refusal: { Refused() }, begin: { begun += 1 }) {
                        ledger.markDeleted("a")
                        try connection.run("INSERT INTO item VALUES ('d')")
                    }
                    throw Failed()
                }
            }
            #expect(ledger.order == ["a", "b", "c"])
            #expect(ledger.pending == ["a": "insert", "b": "insert", "c": "update"])
            #expect(ledger.deleted.isEmpty)
            #expect(try connection.scalar("SELECT group_concat(name) FROM item") == .text("a"))
        }
        #expect((begun, undone, ended) == (1, 1, 1))
    }

    @Test func forgettingKeepsTheOrderOfTheOthers() throws {
        let ledger = SaveLedger<Int, String>()
        try connection.write {
            try ledger.atomically(on: connection, refusal: { Refused() }) {
                for id in 1...4 { ledger.record(id, "insert") }
                ledger.forget(2)
                ledger.record(2, "insert")
                ledger.forget(9)
            }
        }
        #expect(ledger.order == [1, 3, 4, 2])
    }

    @Test func changesRecordInsertsUpdatesAndDeletesAsTheHistoryWillSayThem() throws {
        let ledger = SaveLedger<String, PendingChange<String>>()
        try connection.write {
            try ledger.atomically(on: connection, refusal: { Refused() }) {
                ledger.recordInsertion("new")
                ledger.recordUpdate("new", "title")  // part of the insert
                ledger.recordUpdate("old", "title")
                ledger.recordUpdate("old", "notes")
                ledger.recordUpdate("old", "title")
                ledger.recordUpdate("gone", "title")
                ledger.recordDeletion("gone", tombstone: "kept")
                ledger.recordUpdate("gone", "notes")  // after its delete: nothing
                ledger.recordInsertion("brief")
                ledger.recordDeletion("brief", tombstone: "never")  // inserted and deleted: nothing at all
            }
        }
        #expect(ledger.order == ["new", "old", "gone"])
        #expect(ledger.pending["new"]?.type == .insert)
        #expect(ledger.pending["new"]?.properties == [])
        #expect(ledger.pending["old"]?.properties == ["title", "notes"])
        #expect(ledger.pending["gone"]?.type == .delete)
        #expect(ledger.pending["gone"]?.tombstone == "kept")
        #expect(ledger.pending["brief"] == nil)
        #expect(ledger.deleted == ["gone", "brief"])
    }

    /// Several properties recorded at once leave the ledger as recording them one by one does: the same
    /// order, entries and properties; an empty list records nothing.
    @Test func propertiesRecordedAtOnceEqualOneByOne() throws {
        let batches: [(String, [String])] = [
            ("new", ["title"]), ("old", ["title", "notes", "title"]), ("old", ["due", "notes"]), ("none", []),
            ("gone", ["title"]), ("gone", ["notes"]), ("late", []), ("late", ["a"]),
        ]
        var ledgers: [SaveLedger<String, PendingChange<String>>] = []
        for atOnce in [false, true] {
            let ledger = SaveLedger<String, PendingChange<String>>()
            try connection.write {
                try ledger.atomically(on: connection, refusal: { Refused() }) {
                    ledger.recordInsertion("new")
                    for (index, (id, properties)) in batches.enumerated() {
                        if index == 5 { ledger.recordDeletion("gone", tombstone: "kept") }
                        if atOnce {
                            ledger.recordUpdate(id, properties: properties)
                        } else {
                            for property in properties { ledger.recordUpdate(id, property) }
                        }
                    }
                }
            }
            ledgers.append(ledger)
        }
        let (single, batched) = (ledgers[0], ledgers[1])
        #expect(batched.order == ["new", "old", "gone", "late"])
        #expect(batched.order == single.order)
        #expect(batched.pending["old"]?.properties == ["title", "notes", "due"])
        #expect(batched.pending["none"] == nil)
        for id in single.order {
            #expect(batched.pending[id]?.type == single.pending[id]?.type)
            #expect(batched.pending[id]?.properties == single.pending[id]?.properties)
        }
    }

    @Test func operationsAreRefusedOutsideTheTransactionAndOnceFinished() throws {
        let ledger = SaveLedger<Int, String>()
        #expect(throws: Refused.self) { try ledger.atomically(on: connection, refusal: { Refused() }) {} }
        try connection.write {
            ledger.finish()
            #expect(throws: Refused.self) { try ledger.atomically(on: connection, refusal: { Refused() }) {} }
        }
        #expect(ledger.order.isEmpty)
    }
}
