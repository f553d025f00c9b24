import CoexistBridge
import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import CoexistStore
import TestSupport
import Testing

/// A snapshot's legacy attribute updates are written set-based (one comparison and one `UPDATE … FROM` per
/// set of changed attributes): the new side must end as the object path leaves it — the values, the new
/// side's history naming exactly the attributes that changed (none for an update to the same value), the
/// conflict policy's losers left out, and objects it cannot handle (a relationship changed, deleted since)
/// left to the object path.
@Suite struct SetUpdateTests {
    let old = SaveMetadata(author: "old-app")

    @Test func attributeUpdatesOfASnapshotMirrorExactly() throws {
        let directory = try TemporaryDirectory()
        let shared = try SharedStore.create(in: directory)
        let bridge = try SyncEngine(connection: try Connection(path: shared.legacy.path), model: nil)
        try bridge.initialSyncIfNeeded()
        var tasks: [ObjectID] = []
        var home = ObjectID(entity: "Category", pk: 0)
        try shared.legacy.save(old) { save in
            home = try save.insert("Category", ["id": DemoStore.uuid(250), "name": .string("Home")])
            for index in 0..<50 {
                tasks.append(
                    try save.insert(
                        "Task",
                        [
                            "id": DemoStore.uuid(UInt8(index)), "title": .string("task \(index)"),
                            "createdAt": .date(Double(index)), "priority": .integer(1), "notes": .string("n"),
                        ]
                    )
                )
            }
        }
        _ = try bridge.catchUp()
        let before = try bridge.lastToken()
        try shared.legacy.save(old) { save in
            for index in 0..<20 { try save.update(tasks[index], ["title": .string("renamed \(index)")]) }
            try save.update(tasks[40], ["title": .string("task 40")])  // the value it has
            try save.update(tasks[45], ["title": .string("doomed")])
            try save.update(tasks[46], ["title": .string("moved")])
            try save.setToOne(tasks[46], "category", home)
        }
        try shared.legacy.save(old) { save in
            for index in 10..<30 {
                try save.update(tasks[index], ["priority": .integer(Int64(index)), "notes": .string("changed")])
            }
            try save.delete(tasks[45])
        }
        // Later than the legacy rename of task 5: with later-wins, the new side's title stays.
        try shared.new.save(SaveMetadata(author: "new-app")) { save in
            try save.update(
                ObjectRef(entity: "Task", id: try #require(DemoStore.uuid(5).uuidString)),
                ["title": .string("new 5")]
            )
        }
        var reports: [String] = []
        bridge.report = { reports.append($0.message) }
        let result = try bridge.catchUp()
        #expect(reports.allSatisfy { $0.hasPrefix("conflict on Task") }, "no snapshot failed: \(reports)")
        #expect(result.parked == 0)
        #expect(result.updatedSetBased == 29, "tasks 0 to 29 but 5 (its rename lost), not 40 (unchanged): \(result)")
        let report = try Verifier(engine: bridge).run()
        #expect(report.equal, "\(report.differences.prefix(5))")
        let connection = bridge.connection
        let title = { (index: UInt8) throws -> SQLiteValue in
            try connection.scalar(
                "SELECT title FROM task WHERE id = ?",
                [.text(try #require(DemoStore.uuid(index).uuidString))]
            )
        }
        #expect(try title(3) == .text("renamed 3"))
        #expect(try title(5) == .text("new 5"))
        #expect(try title(46) == .text("moved"))
        #expect(try connection.scalar("SELECT count(*) FROM task WHERE category_id IS NOT NULL") == .integer(1))
        // The mirror's history: one update per object naming what changed, as the object path records it.
        let mirrored = try HistoryReader(connection: connection, decoder: StoreChangeDecoder(store: bridge.legacy))
            .transactions(after: before, limit: 100)
            .filter { $0.author == "coexistd" }
        var properties: [String: [String]] = [:]
        for change in mirrored.flatMap(\.changes) where change.side == .new && change.type == .update {
            properties[change.objectID ?? "", default: []] += change.properties ?? []
        }
        let expected = { (index: UInt8) -> [String] in
            switch index {
            case 0..<10: ["title"]
            case 10..<20: ["notes", "priority", "title"]
            case 20..<30: ["notes", "priority"]
            default: []
            }
        }
        for index in UInt8(0)..<30 where index != 5 {
            let id = try #require(DemoStore.uuid(index).uuidString)
            #expect(properties[id] == expected(index), "task \(index)")
        }
        #expect(
            properties[try #require(DemoStore.uuid(40).uuidString)] == nil,
            "an update to the same value writes nothing"
        )
        #expect(properties[try #require(DemoStore.uuid(45).uuidString)] == nil, "deleted in the same snapshot")
        #expect(properties[try #require(DemoStore.uuid(46).uuidString)]?.contains("title") == true, "the object path")
    }
}
