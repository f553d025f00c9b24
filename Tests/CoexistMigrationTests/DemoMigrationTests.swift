import CoexistBridge
import CoexistHistory
import CoexistLegacyStore
import CoexistMigration
import CoexistModel
import CoexistSQLite
import CoexistStore
import Foundation
import TestSupport
import Testing

/// The guide's V1 → V2 on the demo model (`TaskModel` 1.0.0 → `TaskModel 2` 2.0.0): Task gains `priority`
/// and `notes`, Category gains `color`, all with defaults. A store with data on both sides, bridged under
/// V1, migrated, then bridged under V2 in both directions.
@Suite struct DemoMigrationTests {
    let versions: [XCDataModelReader.Version]

    init() throws {
        versions = try XCDataModelReader.readVersions(path: Fixtures.demoModel)
    }

    /// A V1 store with a category and a task written by the old app and a task by the new one, all
    /// mirrored; returns its path.
    func bridgedV1Store(in directory: TemporaryDirectory) throws -> String {
        let v1 = try #require(versions.first { $0.name == "TaskModel" }).model
        let store = try StoreCreator.create(path: directory.file("Demo.sqlite"), model: v1)
        let bridge = try SyncEngine(connection: try Connection(path: store.path), model: v1)
        try bridge.initialSyncIfNeeded()
        try store.save(SaveMetadata(author: "old-app")) { save in
            let work = try save.insert("Category", ["id": DemoStore.uuid(1), "name": .string("Work")])
            let task = try save.insert(
                "Task",
                ["id": DemoStore.uuid(2), "title": .string("old task"), "createdAt": .date(10)]
            )
            try save.setToOne(task, "category", work)
        }
        _ = try bridge.catchUp()
        try bridge.new.save(SaveMetadata(author: "new-app")) { save in
            let category = ObjectRef(entity: "Category", id: "00000000-0000-0000-0000-000000000001")
            let task = try save.insert(
                "Task",
                id: "00000000-0000-0000-0000-000000000003",
                ["title": .string("new task"), "createdAt": .date(20), "isCompleted": .boolean(true)]
            )
            try save.setToOne(task, "category", category)
        }
        let result = try bridge.catchUp()
        #expect(result.parked == 0)
        #expect(try Verifier(engine: bridge).run().equal)
        return store.path
    }

    @Test func v1ToV2KeepsEveryRowAndTheBridgeMirrorsAfterwards() throws {
        let directory = try TemporaryDirectory()
        let path = try bridgedV1Store(in: directory)
        let report = try Migrator.migrate(store: path, versions: versions)
        #expect(report.from == "TaskModel")
        #expect(report.to == "TaskModel 2")
        #expect(report.steps.count == 1)
        let backup = try #require(report.backup)
        #expect(try RawSQLite.rows(backup, "SELECT count(*) FROM ZTASK") == [[.integer(2)]])

        let connection = try Connection(path: path)
        #expect(
            try connection.rows("SELECT ZTITLE, ZPRIORITY, ZNOTES FROM ZTASK ORDER BY ZTITLE") == [
                [.text("new task"), .integer(0), .text("")], [.text("old task"), .integer(0), .text("")],
            ]
        )
        #expect(try connection.rows("SELECT ZNAME, ZCOLOR FROM ZCATEGORY") == [[.text("Work"), .text("blue")]])
        #expect(
            try connection.rows("SELECT title, priority, notes FROM task ORDER BY title") == [
                [.text("new task"), .integer(0), .text("")], [.text("old task"), .integer(0), .text("")],
            ]
        )
        #expect(try connection.rows("SELECT name, color FROM category") == [[.text("Work"), .text("blue")]])
        #expect(try connection.scalar("SELECT count(*) FROM ZTASK WHERE ZCATEGORY IS NOT NULL") == .integer(2))
        #expect(try connection.scalar("SELECT count(*) FROM task WHERE category_id IS NOT NULL") == .integer(2))

        // The store now says it is V2, and the bridge opens it with the V2 model and mirrors both ways.
        let v2 = try #require(versions.first { $0.name == "TaskModel 2" }).model
        let legacy = try LegacyStore(connection: connection)
        #expect(legacy.metadata.modelVersionIdentifiers == v2.versionIdentifiers)
        let bridge = try SyncEngine(connection: connection, model: v2)
        #expect(try Verifier(engine: bridge).run().equal)
        try legacy.save(SaveMetadata(author: "old-app")) { save in
            _ = try save.insert(
                "Task",
                ["id": DemoStore.uuid(4), "title": .string("after"), "createdAt": .date(30), "priority": .integer(5)]
            )
        }
        try bridge.new.save(SaveMetadata(author: "new-app")) { save in
            try save.insert(
                "Category",
                id: "00000000-0000-0000-0000-000000000005",
                ["name": .string("Home"), "color": .string("green")]
            )
        }
        let result = try bridge.catchUp()
        #expect(result.parked == 0)
        #expect(try connection.scalar("SELECT priority FROM task WHERE title = 'after'") == .integer(5))
        #expect(try connection.scalar("SELECT ZCOLOR FROM ZCATEGORY WHERE ZNAME = 'Home'") == .text("green"))
        let verified = try Verifier(engine: bridge).run()
        #expect(verified.equal, "\(verified.differences.prefix(5))")
    }

    @Test func aStoreAtTheTargetIsLeftAlone() throws {
        let directory = try TemporaryDirectory()
        let store = try DemoStore.create(in: directory)
        let before = FileManager.default.contents(atPath: store.path)
        let report = try Migrator.migrate(store: store.path, versions: versions)
        #expect(report.steps.isEmpty)
        #expect(report.backup == nil)
        #expect(FileManager.default.contents(atPath: store.path) == before)
    }

    @Test func refusedWhileTheBridgeIsBehindOrADaemonServesTheFile() throws {
        let directory = try TemporaryDirectory()
        let path = try bridgedV1Store(in: directory)
        // A commit the bridge has not mirrored yet: migrating would strand it under the old version.
        let v1 = try #require(versions.first).model
        let store = try LegacyStore(path: path, model: v1, options: OpenOptions())
        try store.save(SaveMetadata(author: "old-app")) { save in
            _ = try save.insert("Category", ["id": DemoStore.uuid(9), "name": .string("Late")])
        }
        let before = try directory.contents()
        do {
            _ = try Migrator.migrate(store: path, versions: versions)
            Issue.record("migrated past an unmirrored commit")
        } catch let error as MigrationError {
            #expect("\(error)".contains("mirrored up to token"), "\(error)")
        }
        #expect(try directory.contents() == before)
        _ = try SyncEngine(connection: try Connection(path: path), model: v1).catchUp()
        // The lock coexistd holds while it serves the file.
        let daemon = try DatabaseFileIdentity(path: path)
        try daemon.serveExclusively()
        withExtendedLifetime(daemon) {
            _ = #expect(throws: DatabaseFileIdentity.Served.self) {
                try Migrator.migrate(store: path, versions: versions)
            }
        }
    }
}
