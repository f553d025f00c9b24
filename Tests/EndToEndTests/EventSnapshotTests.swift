import CoexistHistory
import CoexistLegacyStore
import CoexistSQLite
import CoexistStore
import Foundation
import TestSupport
import Testing

/// `"since":"snapshot"`: the current rows, each once, then the changes after the snapshot's token with no
/// gap and no duplicate — while a writer commits.
@Suite struct EventSnapshotTests {
    @Test func rowsThenChangesRebuildTheFileWhileAWriterRuns() throws {
        let fixture = try EventFixture()
        for index in 0..<300 { _ = try fixture.legacyInsert("before \(index)") }
        try fixture.waitUntilCaughtUp()

        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: ProductProcess.productsDirectory + "/coexist-test-helper")
        writer.arguments = ["legacy-writer", fixture.shared.legacy.path, "200", "snapshot-writer"]
        writer.standardOutput = FileHandle.nullDevice
        try writer.run()
        let client = try fixture.client()
        let subscribed = try client.request(#"{"op":"subscribe","since":"snapshot","entities":["Task"],"id":1}"#)
        #expect(subscribed["type"] as? String == "subscribed")
        #expect(subscribed["since"] as? String == "snapshot")
        let snapshot = try fixture.collect(client) { $0["type"] as? String == "end_of_snapshot" }
        let end = try #require(snapshot.last { $0["type"] as? String == "end_of_snapshot" })
        let token = Int64(end["token"] as? Int ?? -1)
        let rows = snapshot.filter { $0["type"] as? String == "row" }
        #expect(end["rows"] as? Int == rows.count)
        #expect(rows.count >= 300)
        #expect(rows.allSatisfy { Int64($0["token"] as? Int ?? 0) == token && $0["entity"] as? String == "Task" })
        #expect(rows.allSatisfy { ($0["values"] as? [String: Any])?["title"] is String })
        var tasks: Set<String> = []
        for row in rows {
            let id = try #require(row["id"] as? String)
            #expect(tasks.insert(id).inserted, "row \(id) sent twice")
        }

        writer.waitUntilExit()
        #expect(writer.terminationStatus == 0)
        try fixture.waitUntilCaughtUp()
        let last = try fixture.shared.legacy.connection.scalar("SELECT max(Z_PK) FROM ATRANSACTION").integerValue ?? 0
        if last > token {
            let changes = try fixture.collect(client) {
                Int64($0["token"] as? Int ?? 0) >= last || ($0["type"] as? String == "end_of_backlog" && token >= last)
            }
            for event in changes where event["type"] as? String == "event" {
                #expect(Int64(event["token"] as? Int ?? 0) > token)
                let id = try #require(event["id"] as? String)
                if event["change"] as? String == "insert" {
                    #expect(tasks.insert(id).inserted, "insert of \(id) after a row of it")
                }
            }
        }
        // Rows and changes together are exactly the tasks the file holds.
        let stored = Set(
            try Connection(path: fixture.shared.legacy.path, options: .readOnly).rows("SELECT id FROM task")
                .compactMap { $0[0].textValue }
        )
        #expect(tasks == stored)
    }

    /// On a real Photos 26.1 store, with a writer updating a keyword throughout: every row of every entity
    /// once, then every change after the snapshot's token once, in token order.
    @Test func photosSnapshotHasEveryRowOnceThenEveryLaterChange() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.copy(Fixtures.photos)
        let daemon = try DaemonProcess(database: path, directory: directory)
        try daemon.waitUntilServing()
        let tokens = TokenLog()
        let writer = Thread {
            guard let store = try? LegacyStore(path: path, options: OpenOptions()) else { return }
            for index in 0..<60 {
                let saved = try? store.save(SaveMetadata(author: "photos-writer")) { save in
                    try save.update(ObjectID(entity: "Keyword", pk: 2), ["shortcut": .string("k\(index)")])
                }
                if let token = saved?.token { tokens.append(token) }
                usleep(3_000)
            }
        }
        writer.start()
        usleep(20_000)
        let client = try SocketClient(path: daemon.socket)
        client.send(#"{"op":"subscribe","since":"snapshot"}"# + "\n")
        var rows: [String: Set<String>] = [:]
        var snapshotToken: Int64 = -1
        var after: [Int64] = []
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, let line = client.readLine() {
            let message = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            switch message["type"] as? String {
            case "row":
                let entity = try #require(message["entity"] as? String)
                let id = try #require(message["id"] as? String)
                #expect(rows[entity, default: []].insert(id).inserted, "\(entity) \(id) sent twice")
            case "end_of_snapshot":
                snapshotToken = Int64(message["token"] as? Int ?? -1)
            case "event":
                let token = Int64(message["token"] as? Int ?? 0)
                if after.last != token { after.append(token) }
            default:
                break
            }
            if tokens.count == 60, let last = tokens.tokens.last, after.last ?? 0 >= last { break }
            if tokens.count == 60, let last = tokens.tokens.last, snapshotToken >= last { break }
        }
        #expect(snapshotToken > 0)
        #expect(tokens.count == 60)
        // Every row of the new schema's entity tables (the writer only updates: the counts hold still).
        let connection = try Connection(path: path, options: .readOnly)
        let model = try #require(try LegacyStore(path: path).model)
        let schema = try NewSchema(model: model)
        var expected = 0
        for table in Set(model.entities.compactMap { schema.entities[$0.name]?.table }) {
            expected += Int(
                try connection.scalar("SELECT count(*) FROM \(SQLIdentifier.quoted(table))").integerValue ?? 0
            )
        }
        #expect(rows.values.reduce(0) { $0 + $1.count } == expected)
        #expect(expected > 800)
        // The changes after the snapshot: exactly the writer's later commits, in order.
        #expect(after == tokens.tokens.filter { $0 > snapshotToken })
    }

    @Test func aSnapshotOfEveryEntityHasEveryRowOnce() throws {
        let fixture = try EventFixture()
        for index in 0..<20 { _ = try fixture.legacyInsert("task \(index)") }
        try fixture.waitUntilCaughtUp()
        let client = try fixture.client()
        client.send(#"{"op":"subscribe","since":"snapshot","framing":"transaction"}"# + "\n")
        let messages = try fixture.collect(client) { $0["type"] as? String == "end_of_backlog" }
        let rows = messages.filter { $0["type"] as? String == "row" }
        let connection = try Connection(path: fixture.shared.legacy.path, options: .readOnly)
        let expected =
            (try connection.scalar("SELECT count(*) FROM task").integerValue ?? 0)
            + (try connection.scalar("SELECT count(*) FROM category").integerValue ?? 0)
        #expect(Int64(rows.count) == expected)
        #expect(Set(rows.compactMap { $0["id"] as? String }).count == rows.count)
        #expect(messages.contains { $0["type"] as? String == "end_of_snapshot" })
    }

    /// A row carries its to-manys as an insert event does: members in order when ordered, sorted otherwise.
    @Test func rowsCarryTheirToManys() throws {
        let fixture = try EventFixture(library: ())
        var shelf = ObjectRef(entity: "Shelf", id: "")
        var empty = ObjectRef(entity: "Shelf", id: "")
        var tag = ObjectRef(entity: "Tag", id: "")
        var books: [ObjectRef] = []
        try fixture.shared.new.save(SaveMetadata(author: "new-app")) { save in
            shelf = try save.insert("Shelf", id: nil, ["label": .string("Fiction")])
            empty = try save.insert("Shelf", id: nil, ["label": .string("Empty")])
            books = try (1...3).map { try save.insert("Book", id: nil, ["title": .string("Book \($0)")]) }
            try save.setOrdered(shelf, "books", [books[2], books[0]])
            tag = try save.insert("Tag", id: nil, ["name": .string("classic")])
            try save.add(tag, to: "books", [books[1], books[0]])
        }
        try fixture.waitUntilCaughtUp()
        let client = try fixture.client()
        client.send(#"{"op":"subscribe","since":"snapshot"}"# + "\n")
        let messages = try fixture.collect(client) { $0["type"] as? String == "end_of_snapshot" }
        var rows: [String: [String: Any]] = [:]
        for message in messages where message["type"] as? String == "row" {
            if let id = message["id"] as? String { rows[id] = message["values"] as? [String: Any] }
        }
        #expect(rows.count == 6)
        #expect(rows[shelf.id]?["books"] as? [String] == [books[2].id, books[0].id])
        #expect(rows[empty.id]?["books"] as? [String] == [])
        #expect(rows[tag.id]?["books"] as? [String] == [books[0].id, books[1].id].sorted())
        #expect(rows[books[0].id]?["tags"] as? [String] == [tag.id])
        #expect(rows[books[0].id]?["shelf"] as? String == shelf.id)
        #expect(rows[books[1].id]?["shelf"] is NSNull)
    }

    /// A snapshot's read transaction holds checkpoints back: one not read within `snapshot-max-duration`
    /// ends with `snapshot_unavailable`, short of its rows.
    @Test func aSnapshotNotReadWithinItsDurationEnds() throws {
        let fixture = try EventFixture(options: ["--snapshot-max-duration", "1s"])
        let count = 5_000  // about 1.4 MB of rows: more than the socket and the queue hold
        try fixture.shared.legacy.save(SaveMetadata(author: "old-app")) { save in
            for index in 0..<count {
                try save.insert(
                    "Task",
                    [
                        "id": .uuid((0..<16).map { _ in UInt8.random(in: 0...255) }),
                        "title": .string("task \(index) " + String(repeating: "x", count: 100)), "createdAt": .date(0),
                    ]
                )
            }
        }
        try fixture.waitUntilCaughtUp()
        let subscribe = #"{"op":"subscribe","since":"snapshot","entities":["Task"]}"# + "\n"
        let slow = try fixture.client()
        slow.send(subscribe)
        usleep(1_600_000)
        let ended = try fixture.collect(slow) {
            $0["type"] as? String == "error" || $0["type"] as? String == "end_of_snapshot"
        }
        #expect(ended.last?["code"] as? String == "snapshot_unavailable")
        #expect(ended.filter { $0["type"] as? String == "row" }.count < count)
        // The connection stays: the client may subscribe again (a reader keeping up gets every row: the
        // other tests, under the default limit).
        #expect(try slow.request(#"{"op":"ping"}"#)["type"] as? String == "pong")
    }
}
