import CoexistBridge
import CoexistConfiguration
import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import CoexistStore
import TestSupport
import Testing

@Suite struct SyncEngineTests {
    let old = SaveMetadata(author: "old-app")
    let newApp = SaveMetadata(author: "new-app")

    func engine(_ shared: SharedStore, policy: ConflictPolicy = .laterWins) throws -> SyncEngine {
        let engine = try SyncEngine(
            connection: try Connection(path: shared.legacy.path),
            model: nil,
            configuration: BridgeConfiguration(conflictPolicy: policy)
        )
        try engine.initialSyncIfNeeded()
        return engine
    }

    @Test func changesFlowBothWaysExactlyOnceWithoutEcho() throws {
        let directory = try TemporaryDirectory()
        let shared = try SharedStore.create(in: directory)
        let bridge = try engine(shared)
        var work = ObjectID(entity: "Category", pk: 0)
        var tasks: [ObjectID] = []
        try shared.legacy.save(old) { save in
            work = try save.insert("Category", ["id": DemoStore.uuid(1), "name": .string("Work")])
            for index in 0..<3 {
                let task = try save.insert(
                    "Task",
                    [
                        "id": DemoStore.uuid(UInt8(10 + index)), "title": .string("t\(index)"),
                        "createdAt": .date(Double(index)),
                    ]
                )
                try save.setToOne(task, "category", work)
                tasks.append(task)
            }
        }
        #expect(try bridge.catchUp().mirrored == 1)
        #expect(try Verifier(engine: bridge).run().equal)
        let workRef = ObjectRef(entity: "Category", id: try #require(DemoStore.uuid(1).uuidString))
        #expect(try shared.new.related(workRef, "tasks").count == 3)

        // New side: rename, move a task out, delete one; legacy side sees it.
        let home = try shared.new.save(newApp) { save in
            let home = try save.insert("Category", ["name": .string("Home")])
            try save.update(workRef, ["name": .string("Office")])
            let moved = ObjectRef(entity: "Task", id: try #require(DemoStore.uuid(10).uuidString))
            try save.setToOne(moved, "category", home)
            try save.delete(ObjectRef(entity: "Task", id: try #require(DemoStore.uuid(12).uuidString)))
        }
        #expect(home.token != nil)
        #expect(try bridge.catchUp().mirrored == 1)
        #expect(try shared.legacy.object(work)?.attributes["name"] == .string("Office"))
        #expect(try shared.legacy.related(work, "tasks") == [tasks[1]])
        #expect(try shared.legacy.objects(of: "Task").count == 2)
        let report = try Verifier(engine: bridge).run()
        #expect(report.equal, "\(report.differences)")

        // Exactly once, no echo: one mirror per source transaction, none for the bridge's own.
        let history = try HistoryReader(store: LegacyStore(path: shared.legacy.path)).transactions(after: 0)
        #expect(history.map { $0.author ?? "" } == ["old-app", "coexistd", "new-app", "coexistd"])
        let mirrors = try shared.legacy.connection.rows(
            "SELECT source_token, mirror_token FROM coexist_mirror ORDER BY source_token"
        )
        #expect(mirrors == [[.integer(1), .integer(2)], [.integer(3), .integer(4)]])
        #expect(try bridge.catchUp().handled == 0)
        #expect(try bridge.cursor() == 4)
    }

    /// A pass whose snapshot was all that was pending moves the cursor past its own mirrors in the same
    /// commit; one that left work behind (here `batchSize` 1) stops at its snapshot.
    @Test func aPassThatCaughtUpPassesItsOwnMirrorsInTheSameCommit() throws {
        let directory = try TemporaryDirectory()
        let shared = try SharedStore.create(in: directory)
        let bridge = try engine(shared)
        try shared.new.save(newApp) { save in
            for number: UInt8 in [1, 2] {
                _ = try save.insert("Category", ["id": DemoStore.uuid(number), "name": .string("a")])
            }
        }
        let first = try bridge.pass()
        #expect(first.mirrored == 1 && first.handled == 1 && first.caughtUp)
        let last = try HistoryReader(store: LegacyStore(path: shared.legacy.path)).lastToken()
        #expect(first.cursor == last)
        #expect(try bridge.cursor() == last)
        // Nothing left, and nothing written: the data version of another connection does not move.
        let watcher = try Connection(path: shared.legacy.path)
        let version = try watcher.dataVersion()
        let idle = try bridge.pass()
        #expect(idle.handled == 0 && idle.cursor == last)
        #expect(try watcher.dataVersion() == version)

        for number: UInt8 in [1, 2] {
            let ref = ObjectRef(entity: "Category", id: try #require(DemoStore.uuid(number).uuidString))
            try shared.new.save(newApp) { save in try save.update(ref, ["name": .string("b")]) }
        }
        bridge.configuration.batchSize = 1
        let partial = try bridge.pass()
        #expect(partial.mirrored == 1 && !partial.caughtUp)
        #expect(partial.cursor == last + 1)
        // The next snapshot holds the other update and the first one's mirror; the cursor passes the second's.
        bridge.configuration.batchSize = 10
        let rest = try bridge.pass()
        #expect(rest.mirrored == 1)
        #expect(rest.caughtUp)
        #expect(rest.cursor == last + 4)
        #expect(try Verifier(engine: bridge).run().equal)
    }

    @Test func legacyMirrorsBumpZOPTAndLookLikeCoreDataHistory() throws {
        let directory = try TemporaryDirectory()
        let shared = try SharedStore.create(in: directory)
        let bridge = try engine(shared)
        var category = ObjectID(entity: "Category", pk: 0)
        try shared.legacy.save(old) { save in
            category = try save.insert("Category", ["id": DemoStore.uuid(1), "name": .string("a")])
        }
        _ = try bridge.catchUp()
        let ref = ObjectRef(entity: "Category", id: try #require(DemoStore.uuid(1).uuidString))
        try shared.new.save(newApp) { save in try save.update(ref, ["name": .string("b")]) }
        _ = try bridge.catchUp()
        #expect(try shared.legacy.object(category)?.version == 2)
        let reader = try HistoryReader(store: LegacyStore(path: shared.legacy.path))
        let mirrored = try #require(try reader.transactions(after: 3).first)
        #expect(mirrored.author == "coexistd")
        #expect(mirrored.side == .legacy)
        #expect(
            mirrored.changes.map { "\($0.entity ?? "") \($0.type) \($0.properties ?? [])" } == [
                "Category update [\"name\"]"
            ]
        )
    }

    @Test(arguments: [ConflictPolicy.laterWins, .legacyWins, .newWins])
    func conflictsConvergeToThePolicy(policy: ConflictPolicy) throws {
        let directory = try TemporaryDirectory()
        let shared = try SharedStore.create(in: directory)
        let bridge = try engine(shared, policy: policy)
        var category = ObjectID(entity: "Category", pk: 0)
        try shared.legacy.save(old) { save in
            category = try save.insert("Category", ["id": DemoStore.uuid(1), "name": .string("start")])
        }
        _ = try bridge.catchUp()
        let ref = ObjectRef(entity: "Category", id: try #require(DemoStore.uuid(1).uuidString))
        // Both sides change the same attribute between two passes: legacy first, then new.
        try shared.legacy.save(old) { save in try save.update(category, ["name": .string("legacy")]) }
        try shared.new.save(newApp) { save in try save.update(ref, ["name": .string("new")]) }
        let result = try bridge.catchUp()
        #expect(result.conflicts == 1)
        let expected: AttributeValue = policy == .legacyWins ? .string("legacy") : .string("new")
        #expect(try shared.legacy.object(category)?.attributes["name"] == expected)
        #expect(try shared.new.values(of: ref)?["name"] == expected)
        let recorded = try shared.legacy.connection.rows(
            "SELECT property, winner_side, loser_side, policy FROM coexist_conflict"
        )
        let winner = policy == .legacyWins ? "legacy" : "new"
        #expect(
            recorded == [
                [.text("name"), .text(winner), .text(winner == "new" ? "legacy" : "new"), .text(policy.rawValue)]
            ]
        )
        let listed = try BridgeRecords.conflicts(shared.legacy.connection)
        #expect(
            listed.map { "\($0.entity) \($0.property) \($0.winnerSide) \($0.policy)" } == [
                "Category name \(winner) \(policy.rawValue)"
            ]
        )
        let newest = try #require(listed.first.map { max($0.winnerToken, $0.loserToken) })
        #expect(try BridgeRecords.conflicts(shared.legacy.connection, sinceToken: newest - 1).count == 1)
        #expect(try BridgeRecords.conflicts(shared.legacy.connection, sinceToken: newest).isEmpty)
        #expect(try BridgeRecords.conflicts(shared.legacy.connection, sinceTime: listed[0].detectedAt + 1).isEmpty)
        #expect(try Verifier(engine: bridge).run().equal)
        #expect(try bridge.catchUp().mirrored == 0)  // no ping-pong
    }

    @Test func aTransactionThatCannotBeMirroredIsParkedAndTheRestFlows() throws {
        let directory = try TemporaryDirectory()
        let shared = try SharedStore.create(in: directory)
        let bridge = try engine(shared)
        try shared.legacy.save(old) { save in
            try save.insert("Category", ["id": DemoStore.uuid(1), "name": .string("a")])
        }
        // A change for an entity number the model does not know, as a foreign writer might leave.
        try shared.legacy.connection.execute(
            """
            INSERT INTO ATRANSACTION (Z_PK, Z_ENT, ZTIMESTAMP) VALUES (2, 16002, 0);
            INSERT INTO ACHANGE (Z_PK, Z_ENT, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID) VALUES (100, 16001, 0, 999, 1, 2);
            UPDATE Z_PRIMARYKEY SET Z_MAX = 2 WHERE Z_ENT = 16002;
            UPDATE Z_PRIMARYKEY SET Z_MAX = 100 WHERE Z_ENT = 16001;
            """
        )
        try shared.legacy.save(old) { save in
            try save.insert("Category", ["id": DemoStore.uuid(2), "name": .string("b")])
        }
        let result = try bridge.catchUp()
        #expect(result.parked == 1)
        #expect(result.mirrored == 2)
        let parked = try shared.legacy.connection.rows("SELECT token, error FROM coexist_parked")
        #expect(parked.first?[0] == .integer(2))
        #expect(parked.first?[1].textValue?.contains("999") == true)
        #expect(try Verifier(engine: bridge).run().equal)
    }

    /// A copy of each real Core Data store syncs to the new schema and verifies equal.
    @Test(arguments: Fixtures.allStores) func initialSyncOfFixtures(fixture: String) throws {
        let directory = try TemporaryDirectory()
        let copy = try directory.copy(fixture)
        let connection = try Connection(path: copy)
        let bridge = try SyncEngine(
            connection: connection,
            model: nil,
            configuration: BridgeConfiguration(initialSyncChunk: 97)
        )
        var progress = 0
        #expect(try bridge.initialSyncIfNeeded { _ in progress += 1 })
        #expect(progress > 0)
        let report = try Verifier(engine: bridge).run()
        #expect(report.equal, "\(report.differenceCount) differences: \(report.differences.prefix(5))")
        #expect(report.objects.legacy == report.objects.new)
        #expect(try bridge.initialSyncIfNeeded() == false)
        #expect(try bridge.catchUp().parked == 0)
    }
}
