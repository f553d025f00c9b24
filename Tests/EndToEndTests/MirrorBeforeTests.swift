import CoexistBridge
import CoexistConfiguration
import CoexistDaemon
import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import CoexistStore
import Foundation
import TestSupport
import Testing

@testable import CoexistEvents

/// A legacy update's `before` is the mirror's last state of the object (its new-schema row) only while that
/// row is exactly the object's state before the update: the bridge has not handled the update, and nothing
/// else changed the object since the bridge's cursor, on either side. Otherwise the event has none.
@Suite struct MirrorBeforeTests {
    let old = SaveMetadata(author: "old-app")

    /// The `before` of `token`'s only event as the event service encodes it with values now.
    private func before(_ token: Int64, _ source: EventSource) throws -> [String: String]? {
        let transaction = try #require(try source.transactions(after: token - 1, through: token, limit: 1).first)
        let line = try #require(try source.events(transaction, values: true).first?.withValues)
        let data = Data(UnsafeRawBufferPointer(rebasing: line.bytes[0..<line.count]))
        let event = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        return (event["before"] as? [String: Any])?.mapValues { "\($0)" }
    }

    @Test func aLegacyUpdateCarriesTheMirrorsStateOnlyWhenItIsExact() throws {
        let directory = try TemporaryDirectory()
        let shared = try SharedStore.create(in: directory)
        let bridge = try SyncEngine(connection: try Connection(path: shared.legacy.path), model: nil)
        try bridge.initialSyncIfNeeded()
        let created = try shared.legacy.save(old) { save in
            try save.insert(
                "Task",
                [
                    "id": .uuid((0..<16).map { _ in UInt8.random(in: 0...255) }), "title": .string("first"),
                    "createdAt": .date(0), "priority": .integer(0),
                ]
            )
        }
        let task = ObjectID(entity: "Task", pk: try #require(created.changes.first?.objectPK))
        _ = try bridge.catchUp()
        let configuration = try DaemonConfiguration.parse("database = \(shared.legacy.path)\n", file: "test.conf")
        let source = try EventSource(engine: try Daemon.openEventEngine(configuration))
        func update(_ values: [String: AttributeValue]) throws -> Int64 {
            try #require(try shared.legacy.save(old) { save in try save.update(task, values) }.token)
        }

        // Not mirrored yet, the only change since the cursor: the row is the state before it.
        let first = try update(["priority": .integer(1), "title": .string("second")])
        #expect(try before(first, source) == ["priority": "0", "title": "first"])
        // Another object's change does not matter.
        _ = try shared.legacy.save(old) { save in
            try save.insert(
                "Task",
                [
                    "id": .uuid((0..<16).map { _ in UInt8.random(in: 0...255) }), "title": .string("other"),
                    "createdAt": .date(0), "priority": .integer(7),
                ]
            )
        }
        #expect(try before(first, source) == ["priority": "0", "title": "first"])
        // A second update of the object before the bridge ran: neither can say.
        let second = try update(["priority": .integer(2)])
        #expect(try before(first, source) == nil)
        #expect(try before(second, source) == nil)
        // Mirrored: the row is past them.
        _ = try bridge.catchUp()
        #expect(try before(second, source) == nil)

        let third = try update(["priority": .integer(3)])
        #expect(try before(third, source) == ["priority": "2"])
        // A new-schema change of the object after the cursor: the row is not the state before the update.
        let id = try #require(try bridge.identity(ofLegacy: "Task", pk: task.pk))
        _ = try shared.new.save(SaveMetadata(author: "new-app")) { save in
            try save.update(ObjectRef(entity: "Task", id: id), ["notes": .string("new side")])
        }
        #expect(try before(third, source) == nil)
    }
}
