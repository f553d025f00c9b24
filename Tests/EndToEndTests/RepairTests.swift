import CoexistHistory
import CoexistLegacyStore
import CoexistSQLite
import CoexistStore
import Foundation
import TestSupport
import Testing

/// Rows changed and deleted behind the bridge's back (raw SQL): `verify` reports them, `verify --repair`
/// and `history replay --into` make both sides equal again, and a second repair writes nothing.
@Suite struct RepairTests {
    /// A bridged demo store with 6 tasks in 2 categories, mirrored by `coexistd --once`.
    static func bridgedStore(_ directory: TemporaryDirectory) throws -> (path: String, tasks: [ObjectID]) {
        let shared = try SharedStore.create(in: directory)
        var tasks: [ObjectID] = []
        try shared.legacy.save(SaveMetadata(author: "old-app")) { save in
            let categories = try (1...2).map { index in
                try save.insert("Category", ["id": DemoStore.uuid(UInt8(index)), "name": .string("c\(index)")])
            }
            for index in 0..<6 {
                let task = try save.insert(
                    "Task",
                    ["id": DemoStore.uuid(UInt8(10 + index)), "title": .string("t\(index)"), "createdAt": .date(0)]
                )
                try save.setToOne(task, "category", categories[index % 2])
                tasks.append(task)
            }
        }
        try mirrorOnce(shared.legacy.path, directory)
        return (shared.legacy.path, tasks)
    }

    static func mirrorOnce(_ path: String, _ directory: TemporaryDirectory) throws {
        let run = try ProductProcess.run(
            "coexistd",
            ["--database", path, "--socket", directory.file("d.sock"), "--once"]
        )
        #expect(run.status == 0, "\(run.stderr)")
    }

    static func verify(_ path: String, _ extra: [String] = []) throws -> ProductProcess.Result {
        try ProductProcess.run("coexistctl", ["verify", path] + extra)
    }

    static func lastToken(_ path: String) throws -> Int64 {
        try Connection(path: path, options: .readOnly).scalar("SELECT max(Z_PK) FROM ATRANSACTION").integerValue ?? 0
    }

    /// Breaks both sides by hand: a new-side title, a deleted new-side row, a legacy-side title.
    static func breakBehindTheBridge(_ path: String, _ tasks: [ObjectID]) throws {
        let raw = try Connection(path: path)
        try raw.run("UPDATE task SET title = 'hacked' WHERE title = 't1'")
        try raw.run("DELETE FROM task WHERE title = 't2'")
        try raw.run("UPDATE ZTASK SET ZTITLE = 'edited by hand' WHERE Z_PK = ?", [.integer(tasks[3].pk)])
    }

    @Test func verifyRepairMakesBothSidesEqual() throws {
        let directory = try TemporaryDirectory()
        let (path, tasks) = try Self.bridgedStore(directory)
        #expect(try Self.verify(path).status == 0)
        try Self.breakBehindTheBridge(path, tasks)
        let broken = try Self.verify(path)
        #expect(broken.status == 1)
        #expect(broken.stdout.contains("4 differences"), "\(broken.stdout)")

        let before = HistoryToolsTests.files(path)
        let dry = try Self.verify(path, ["--repair", "--dry-run"])
        #expect(dry.status == 1 && dry.stdout.contains("would repair 4 objects from the legacy side"), "\(dry.stdout)")
        #expect(HistoryToolsTests.files(path) == before, "the dry run wrote")

        let repair = try Self.verify(path, ["--repair", "--json"])
        #expect(repair.status == 0, "\(repair.stdout) \(repair.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(repair.stdout.utf8)) as? [String: Any] ?? [:]
        #expect((report["after"] as? [String: Any])?["equal"] as? Bool == true, "\(report)")
        let values = try Connection(path: path, options: .readOnly).rows(
            "SELECT title FROM task ORDER BY title"
        ).compactMap { $0.first?.textValue }
        #expect(values == ["edited by hand", "t0", "t1", "t2", "t4", "t5"], "\(values)")

        // Nothing differs any more: a second repair writes nothing.
        let token = try Self.lastToken(path)
        let again = try Self.verify(path, ["--repair"])
        #expect(again.status == 0 && again.stdout.contains("equal"), "\(again.stdout)")
        #expect(try Self.lastToken(path) == token)
        // The repair is the bridge's own transaction: coexistd mirrors nothing back.
        try Self.mirrorOnce(path, directory)
        #expect(try Self.lastToken(path) == token)
        #expect(try Self.verify(path).status == 0)
    }

    /// `--from new`: the new side is right; a legacy row edited by hand gets the new side's value back.
    @Test func repairFromTheNewSide() throws {
        let directory = try TemporaryDirectory()
        let (path, tasks) = try Self.bridgedStore(directory)
        try Connection(path: path).run("UPDATE ZTASK SET ZTITLE = 'wrong' WHERE Z_PK = ?", [.integer(tasks[0].pk)])
        #expect(try Self.verify(path, ["--repair", "--from", "new"]).status == 0)
        let title = try Connection(path: path, options: .readOnly).scalar(
            "SELECT ZTITLE FROM ZTASK WHERE Z_PK = ?",
            [.integer(tasks[0].pk)]
        )
        #expect(title == .text("t0"))
    }

    /// `history replay --into new` re-applies the objects of the range; `--dry-run` only lists them; a
    /// second replay writes nothing; while a coexistd serves the file, it is refused.
    @Test func replayIntoRepairsTheObjectsOfTheRange() throws {
        let directory = try TemporaryDirectory()
        let (path, tasks) = try Self.bridgedStore(directory)
        try Self.breakBehindTheBridge(path, tasks)
        let before = HistoryToolsTests.files(path)
        let dry = try ProductProcess.run(
            "coexistctl",
            ["history", "replay", path, "--from", "1", "--into", "new", "--dry-run"]
        )
        #expect(dry.status == 0 && dry.stdout.contains("4 of them differ"), "\(dry.stdout) \(dry.stderr)")
        #expect(HistoryToolsTests.files(path) == before, "the dry run wrote")

        let replay = try ProductProcess.run("coexistctl", ["history", "replay", path, "--from", "1", "--into", "new"])
        #expect(replay.status == 0, "\(replay.stderr)")
        let repaired = try Self.verify(path)
        #expect(repaired.status == 0, "\(repaired.stdout)")
        let token = try Self.lastToken(path)
        let again = try ProductProcess.run("coexistctl", ["history", "replay", path, "--from", "1", "--into", "new"])
        #expect(again.stdout.contains("nothing written"), "\(again.stdout)")
        #expect(try Self.lastToken(path) == token)

        let daemon = try DaemonProcess(database: path, directory: directory)
        try daemon.waitUntilServing()
        let served = try ProductProcess.run("coexistctl", ["history", "replay", path, "--from", "1", "--into", "new"])
        #expect(served.status == 75, "\(served.stderr)")
        #expect(daemon.stop() == 0)
    }

    /// `history replay --events` prints what a subscriber with `since` receives for the same range.
    @Test func replayEventsEqualWhatASubscriberGets() throws {
        let fixture = try EventFixture()
        var tokens: [Int64] = []
        for index in 0..<6 { tokens.append(try fixture.legacyInsert("e\(index)")) }
        try fixture.waitUntilCaughtUp()
        let range = (tokens[1], tokens[4])
        let subscriber = try fixture.client()
        subscriber.send(#"{"op":"subscribe","since":\#(range.0 - 1)}"# + "\n")
        var received: [String] = []
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, let line = subscriber.readLine() {
            if line.contains(#""type":"end_of_backlog""#) { break }
            guard line.contains(#""type":"event""#) else { continue }
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            if let token = (object?["token"] as? Int).map(Int64.init), token <= range.1 { received.append(line) }
        }
        let replay = try ProductProcess.run(
            "coexistctl",
            ["history", "replay", fixture.shared.legacy.path, "--from", "\(range.0)", "--to", "\(range.1)", "--events"]
        )
        #expect(replay.status == 0, "\(replay.stderr)")
        let printed = replay.stdout.split(separator: "\n").map(String.init)
        #expect(!printed.isEmpty)
        #expect(
            printed == received,
            "replay:\n\(printed.joined(separator: "\n"))\nsubscriber:\n\(received.joined(separator: "\n"))"
        )
    }

    /// A repair never takes a change on its way for a divergence: a new-side insert coexistd has not
    /// mirrored yet is mirrored first (not deleted as "missing in the legacy schema").
    @Test func aPendingChangeIsMirroredNotRepairedAway() throws {
        let directory = try TemporaryDirectory()
        let (path, _) = try Self.bridgedStore(directory)
        let legacy = try LegacyStore(path: path, options: OpenOptions())
        let model = try #require(legacy.model)
        let new = try NewStore(connection: legacy.connection, model: model)
        try new.save(SaveMetadata(author: "new-app")) { save in
            _ = try save.insert("Task", ["title": .string("pending"), "createdAt": .date(1)])
        }
        let repair = try Self.verify(path, ["--repair"])
        #expect(repair.status == 0, "\(repair.stdout) \(repair.stderr)")
        let count = try Connection(path: path, options: .readOnly).scalar(
            "SELECT count(*) FROM ZTASK WHERE ZTITLE = 'pending'"
        )
        #expect(count == .integer(1), "the pending insert was lost")
    }

    /// Parked twins (legacy objects sharing an id) and objects never mirrored are left as they are, named.
    @Test func parkedAndNeverMirroredObjectsAreLeftAlone() throws {
        let directory = try TemporaryDirectory()
        let shared = try SharedStore.create(in: directory)
        try shared.legacy.save(SaveMetadata(author: "old-app")) { save in
            for index in 0..<6 {
                _ = try save.insert(
                    "Task",
                    ["id": DemoStore.uuid(UInt8(index % 4)), "title": .string("t\(index)"), "createdAt": .date(0)]
                )
            }
        }
        try Self.mirrorOnce(shared.legacy.path, directory)
        let path = shared.legacy.path
        // A row written into the new schema by hand: never mirrored.
        try Connection(path: path).run(
            "INSERT INTO task (id, title, created_at, priority, is_completed) VALUES ('00000000-0000-0000-0000-0000000000ff', 'by hand', 0, 0, 0)"
        )
        func count(_ sql: String) throws -> SQLiteValue { try Connection(path: path, options: .readOnly).scalar(sql) }
        // From the legacy side: the row only the new side has was never mirrored, so it is not deleted.
        let fromLegacy = try Self.verify(path, ["--repair"])
        #expect(fromLegacy.status == 1, "\(fromLegacy.stdout)")
        #expect(fromLegacy.stdout.contains("only on the new side and never mirrored"), "\(fromLegacy.stdout)")
        #expect(try count("SELECT count(*) FROM task WHERE title = 'by hand'") == .integer(1))
        // Replaying every object into the legacy side leaves the parked twins alone.
        let replay = try ProductProcess.run(
            "coexistctl",
            ["history", "replay", path, "--from", "1", "--into", "legacy"]
        )
        #expect(replay.stdout.contains("left as is") && replay.stdout.contains("parked"), "\(replay.stdout)")
        #expect(try count("SELECT count(*) FROM ZTASK") == .integer(6), "a parked twin was deleted")
        // From the new side: the row written by hand is copied to the legacy side; the twins stay.
        _ = try Self.verify(path, ["--repair", "--from", "new"])
        #expect(try count("SELECT count(*) FROM ZTASK") == .integer(7))
        #expect(try count("SELECT count(*) FROM ZTASK WHERE ZTITLE = 'by hand'") == .integer(1))
    }

    /// `verify --bootstrap` on a real Core Data store the bridge never ran on: it is set up as coexistd's
    /// first start would (new schema, initial sync), then compared: equal.
    @Test func verifyBootstrapSetsUpAnUnbridgedStore() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.copy(Fixtures.sampleModelV1)
        #expect(try Self.verify(path).status == 1)
        let bootstrapped = try Self.verify(path, ["--bootstrap"])
        #expect(bootstrapped.status == 0, "\(bootstrapped.stdout) \(bootstrapped.stderr)")
        #expect(bootstrapped.stdout.contains("equal"), "\(bootstrapped.stdout)")
        #expect(bootstrapped.stderr.contains("initial sync"), "\(bootstrapped.stderr)")
        #expect(try Self.verify(path).status == 0)
        let again = try Self.verify(path, ["--bootstrap"])
        #expect(again.status == 0 && !again.stderr.contains("initial sync"), "\(again.stderr)")
    }
}

/// `history replay --to-store`: a copy taken at some token gets the later transactions, and holds what the
/// store holds.
@Suite struct StoreReplayTests {
    /// Every object of both stores, as `entity/pk attribute=value … relationship=[pks]` lines.
    static func contents(_ store: LegacyStore) throws -> [String] {
        guard let model = store.model else { return [] }
        var lines: [String] = []
        for root in model.entities where root.superentity == nil {
            try store.forEachObject(of: root.name) { object in
                guard let entity = model.entity(named: object.id.entity) else { return }
                var line = "\(object.id)"
                for (name, value) in object.attributes.sorted(by: { $0.key < $1.key }) { line += " \(name)=\(value)" }
                for relationship in model.allRelationships(of: entity) {
                    line +=
                        " \(relationship.name)=\(try store.related(object.id, relationship.name).map(\.pk).sorted())"
                }
                lines.append(line)
            }
        }
        return lines.sorted()
    }

    @Test func aCopyCatchesUpWithTheStore() throws {
        let directory = try TemporaryDirectory()
        let shared = try SharedStore.create(in: directory)
        let metadata = SaveMetadata(author: "old-app", processName: "writer")
        var categories: [ObjectID] = []
        var tasks: [ObjectID] = []
        try shared.legacy.save(metadata) { save in
            categories = try (1...2).map {
                try save.insert("Category", ["id": DemoStore.uuid(UInt8($0)), "name": .string("c\($0)")])
            }
            for index in 0..<4 {
                let task = try save.insert(
                    "Task",
                    ["id": DemoStore.uuid(UInt8(10 + index)), "title": .string("t\(index)"), "createdAt": .date(0)]
                )
                try save.setToOne(task, "category", categories[0])
                tasks.append(task)
            }
        }
        let copy = directory.file("Copy.sqlite")
        try shared.legacy.connection.run("VACUUM INTO ?", [.text(copy)])
        let from =
            try Connection(path: shared.legacy.path, options: .readOnly)
            .scalar("SELECT max(Z_PK) FROM ATRANSACTION").integerValue ?? 0
        try shared.legacy.save(metadata) { save in
            try save.update(tasks[0], ["title": .string("renamed"), "priority": .integer(3)])
            try save.setToOne(tasks[1], "category", categories[1])
            let task = try save.insert(
                "Task",
                ["id": DemoStore.uuid(20), "title": .string("new"), "createdAt": .date(5)]
            )
            try save.setToOne(task, "category", categories[1])
        }
        try shared.legacy.save(metadata) { save in try save.delete(tasks[2]) }
        let replay = try ProductProcess.run(
            "coexistctl",
            ["history", "replay", shared.legacy.path, "--from", "\(from + 1)", "--to-store", copy, "--json"]
        )
        #expect(replay.status == 0, "\(replay.stdout) \(replay.stderr)")
        #expect(replay.stdout.contains(#""transactions":2"#), "\(replay.stdout)")
        let source = try Self.contents(shared.legacy)
        let replayed = try Self.contents(try LegacyStore(path: copy))
        #expect(
            source == replayed,
            "source:\n\(source.joined(separator: "\n"))\ncopy:\n\(replayed.joined(separator: "\n"))"
        )
        // The copy's own history has the two saves, by the same author.
        let authors = try Connection(path: copy, options: .readOnly).rows(
            """
            SELECT s.ZNAME FROM ATRANSACTION t JOIN ATRANSACTIONSTRING s ON s.Z_PK = t.ZAUTHORTS
            WHERE t.Z_PK > ? ORDER BY t.Z_PK
            """,
            [.integer(from)]
        )
        #expect(authors == [[.text("old-app")], [.text("old-app")]], "\(authors)")
        // The same range again: the inserted object's key is taken now, so the change is named and skipped.
        let again = try ProductProcess.run(
            "coexistctl",
            ["history", "replay", shared.legacy.path, "--from", "\(from + 1)", "--to-store", copy]
        )
        #expect(again.status == 1 && again.stderr.contains("skipped"), "\(again.stderr)")
        let same = try ProductProcess.run(
            "coexistctl",
            ["history", "replay", shared.legacy.path, "--from", "1", "--to-store", shared.legacy.path]
        )
        #expect(same.status == 64, "\(same.stderr)")
    }
}
