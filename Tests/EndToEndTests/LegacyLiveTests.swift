import CoexistCoreData
import Foundation
import TestSupport
import Testing

/// The Core Data-shaped context following the file: another process (or coexistd mirroring the new
/// schema) commits, and objects the context already holds show it without a fetch.
@Suite struct LegacyLiveTests {
    let directory: TemporaryDirectory
    let path: String
    let model = Fixtures.demoModel

    init() throws {
        directory = try TemporaryDirectory()
        path = directory.file("Live.sqlite")
        #expect(try ProductProcess.run("coexistctl", ["create", path, "--model", model]).status == 0)
    }

    func edit(_ pk: Int64, _ title: String) throws -> Int64 {
        let run = try ProductProcess.run("coexist-test-helper", ["legacy-edit", path, "\(pk)", title])
        try #require(run.status == 0, "\(run.stderr)")
        return Int64(run.stdout.split(separator: " ").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? -1
    }

    @Test func anotherProcessEditsAndDeletesHeldObjects() async throws {
        let context = try ManagedObjectContext(storeAt: path, modelAt: model)
        var held: [ManagedObject] = []
        for index in 0..<2 {
            let task = context.insertNewObject(forEntityName: "Task")
            task.setValue(UUID(), forKey: "id")
            task.setValue("Task \(index)", forKey: "title")
            task.setValue(Date(), forKey: "createdAt")
            held.append(task)
        }
        try context.save()
        #expect(try context.mergeChangesFromStore().isEmpty)  // its own save is not news
        let remote = try context.remoteChanges(from: .file)
        let watcher = remote.watcher
        let deadline = Task {
            try await Task.sleep(for: .seconds(60))
            watcher.stop()
        }
        defer { deadline.cancel() }
        var changes = remote.makeAsyncIterator()
        let pk = Int64(held[0].objectID.uriRepresentation().lastPathComponent.dropFirst()) ?? 0
        #expect(held[0].value(forKey: "title") as? String == "Task 0")

        let token = try edit(pk, "Edited elsewhere")
        let change = try #require(try await changes.next())
        #expect(change.token == token)
        #expect(change.updated == [held[0].objectID])
        #expect(change.author == "other-process")
        #expect(held[0].value(forKey: "title") as? String == "Edited elsewhere")

        // An unsaved local edit is never overwritten: it is reported, and the save meets the merge policy.
        held[1].setValue("Mine", forKey: "title")
        _ = try edit(pk + 1, "Theirs")
        let conflicting = try #require(try await changes.next())
        #expect(conflicting.conflicts == [held[1].objectID])
        #expect(held[1].value(forKey: "title") as? String == "Mine")
        #expect(throws: CoreDataError.self) { try context.save() }
        context.rollback()
        context.refresh(held[1], mergeChanges: false)
        #expect(held[1].value(forKey: "title") as? String == "Theirs")

        _ = try edit(pk, "-")
        let deleted = try #require(try await changes.next())
        #expect(deleted.deleted == [held[0].objectID])
        #expect(held[0].isDeleted && held[0].managedObjectContext == nil)
        watcher.stop()
        #expect(try await changes.next() == nil)
    }

    @Test func newSideCommitsArriveThroughCoexistd() throws {
        let socket = directory.file("s.sock")
        let daemon = ["--database", path, "--model", model, "--socket", socket, "--once"]
        #expect(try ProductProcess.run("coexistd", daemon).status == 0)
        let context = try ManagedObjectContext(storeAt: path, modelAt: model)
        let writer = try ProductProcess.run("coexist-test-helper", ["new-writer", path, "2", "new-app"])
        try #require(writer.status == 0, "\(writer.stderr)")
        #expect(try context.mergeChangesFromStore().isEmpty)  // not mirrored yet: the legacy side has nothing
        #expect(try ProductProcess.run("coexistd", daemon).status == 0)
        let changes = try context.mergeChangesFromStore()
        #expect(changes.flatMap(\.inserted).count == 2)
        #expect(changes.allSatisfy { $0.author != "new-app" })
        let titles = try changes.flatMap(\.inserted).map {
            try context.existingObject(with: $0).value(forKey: "title") as? String
        }
        #expect(Set(titles) == ["new-app 0", "new-app 1"])
    }
}
