import CoexistBridge
import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import CoexistStore
import Foundation
import TestSupport
import Testing

@testable import CoexistEvents

/// Every event names its object on both sides: a legacy change by the identity the bridge recorded (or, not
/// mirrored yet, its identity attribute), a new-side change by the legacy `Z_PK` the bridge recorded. A
/// transaction's keys are read together, so each event of a many-change transaction must still get its own.
@Suite struct EventKeysTests {
    let shared: SharedStore
    let engine: SyncEngine
    let source: EventSource
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
        shared = try SharedStore.create(in: directory)
        engine = try SyncEngine(connection: try Connection(path: shared.legacy.path), model: nil)
        try engine.initialSyncIfNeeded()
        source = try EventSource(engine: engine)
    }

    /// The events of the transaction at `token`, decoded, as (entity, id, pk).
    private func keys(_ token: Int64?) throws -> [(entity: String, id: String?, pk: Int64?)] {
        let token = try #require(token)
        let transaction = try #require(try source.transactions(after: token - 1, through: token, limit: 1).first)
        return try source.events(transaction, values: false).map { event in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(event.plain.array)) as? [String: Any])
            return (
                try #require(object["entity"] as? String), object["id"] as? String,
                (object["pk"] as? Int).map(Int64.init)
            )
        }
    }

    @Test func eachEventOfATransactionCarriesItsOwnKeysOnBothSides() throws {
        let app = SaveMetadata(author: "old-app")
        var objects: [(id: ObjectID, uuid: String)] = []
        let inserted = try shared.legacy.save(app) { save in
            for index in 0..<3 {
                let uuid = UUIDText.randomBytes()
                let category = try save.insert("Category", ["id": .uuid(uuid), "name": .string("c\(index)")])
                objects.append((category, UUIDText.text(uuid) ?? ""))
            }
            for index in 0..<40 {
                let uuid = UUIDText.randomBytes()
                let task = try save.insert(
                    "Task",
                    ["id": .uuid(uuid), "title": .string("t\(index)"), "createdAt": .date(Double(index))]
                )
                objects.append((task, UUIDText.text(uuid) ?? ""))
            }
        }
        // Not mirrored yet: named by their identity attributes.
        let expected = objects.map { ($0.id.entity, $0.uuid, $0.id.pk) }
        let unmirrored = try keys(inserted.token)
        #expect(unmirrored.map(\.entity) == expected.map(\.0))
        #expect(unmirrored.map(\.id) == expected.map(\.1))
        #expect(unmirrored.map(\.pk) == expected.map(\.2))

        _ = try engine.catchUp()
        // Mirrored: named by the recorded identity, even when the same save gives the object another identity
        // attribute; in the same transaction, new objects are named by their attributes.
        var added: [(id: ObjectID, uuid: String)] = []
        let updated = try shared.legacy.save(app) { save in
            for object in objects.reversed() where object.id.entity == "Task" {
                try save.update(object.id, ["title": .string("renamed"), "id": .uuid(UUIDText.randomBytes())])
            }
            for index in 0..<2 {
                let uuid = UUIDText.randomBytes()
                let task = try save.insert(
                    "Task",
                    ["id": .uuid(uuid), "title": .string("n\(index)"), "createdAt": .date(Double(index))]
                )
                added.append((task, UUIDText.text(uuid) ?? ""))
            }
        }
        let tasks = objects.reversed().filter { $0.id.entity == "Task" } + added
        let legacyUpdates = try keys(updated.token)
        #expect(legacyUpdates.map(\.id) == tasks.map(\.uuid))
        #expect(legacyUpdates.map(\.pk) == tasks.map(\.id.pk))

        // A new-side save: the mirrored objects named by their recorded legacy keys, a new one by none yet.
        var newObject: ObjectRef?
        let newSave = try shared.new.save(SaveMetadata(author: "new-app")) { save in
            for object in objects {
                let ref = ObjectRef(entity: object.id.entity, id: object.uuid)
                try save.update(ref, object.id.entity == "Task" ? ["notes": .string("n")] : ["name": .string("n")])
            }
            newObject = try save.insert("Task", id: nil, ["title": .string("new"), "createdAt": .date(0)])
        }
        let newUpdates = try keys(newSave.token)
        #expect(newUpdates.map(\.entity) == expected.map(\.0) + ["Task"])
        #expect(newUpdates.map(\.id) == expected.map(\.1) + [newObject?.id])
        #expect(newUpdates.map(\.pk) == expected.map(\.2) + [nil])
    }
}
