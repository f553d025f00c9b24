import CoexistData
import CoexistModel
import CoexistStore
import Foundation
import TestSupport
import Testing

/// The SwiftData side's history: fetch by token range, author and limit, with its changes; delete older.
@Suite struct ModelHistoryTests {
    let file: SharedDemoFile
    var path: String { file.path }

    init() throws { file = try SharedDemoFile() }

    func context(_ author: String) throws -> ModelContext { try file.context(author) }

    @Test func fetchAndDeleteHistory() throws {
        let writer = try context("a")
        let task = TaskRecord(title: "Buy milk")
        writer.insert(task)
        let inserted = try #require(try writer.save())
        let renamer = try context("b")
        let identifier = try #require(writer.persistentIdentifier(of: task))
        try #require(try renamer.model(for: identifier, as: TaskRecord.self)).title = "Buy oat milk"
        let renamed = try #require(try renamer.save())
        _ = try writer.mergeChangesFromStore()
        writer.delete(task)
        let deleted = try #require(try writer.save())

        let history = try writer.fetchHistory(HistoryDescriptor())
        #expect(history.map(\.token) == [inserted, renamed, deleted])
        #expect(history.map(\.author) == ["a", "b", "a"])
        #expect(history[0].changes == [.insert(identifier)])
        #expect(history[1].changes == [.update(identifier, updatedAttributes: ["title"])])
        guard case .delete(let gone, let tombstone)? = history[2].changes.first else {
            Issue.record("no delete: \(history[2].changes)")
            return
        }
        #expect(gone == identifier && tombstone["id"] != nil)
        #expect(try writer.fetchHistory(HistoryDescriptor(author: "b")).map(\.token) == [renamed])
        #expect(try writer.fetchHistory(HistoryDescriptor(after: inserted, before: deleted)).map(\.token) == [renamed])
        #expect(try writer.fetchHistory(HistoryDescriptor(fetchLimit: 1)).map(\.token) == [inserted])

        #expect(try writer.deleteHistory(HistoryDescriptor(before: deleted)) == 2)
        #expect(try writer.fetchHistory(HistoryDescriptor()).map(\.token) == [deleted])
        #expect(throws: StoreError.self) { try writer.deleteHistory(HistoryDescriptor()) }
    }

    @Test func mergingPastDeletedHistoryIsAnError() throws {
        let holder = try context("holder")
        let writer = try context("writer")
        let task = TaskRecord(title: "Buy milk")
        writer.insert(task)
        try writer.save()
        writer.delete(task)
        let deleted = try #require(try writer.save())
        #expect(try writer.deleteHistory(HistoryDescriptor(before: deleted + 1)) == 2)
        #expect(throws: LiveError.self) { try holder.mergeChangesFromStore() }
        #expect(try holder.mergeChangesFromStore().isEmpty)
    }
}
