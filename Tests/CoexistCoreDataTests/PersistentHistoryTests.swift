import CoexistCoreData
import CoexistSQLite
import Foundation
import TestSupport
import Testing

/// Persistent-history requests: fetch after a token or a date, by author, limited; delete before a token.
@Suite struct PersistentHistoryTests {
    let directory: TemporaryDirectory
    let path: String

    init() throws {
        directory = try TemporaryDirectory()
        path = try DemoStore.create(in: directory).path
    }

    func transactions(
        _ context: ManagedObjectContext,
        _ request: PersistentHistoryChangeRequest
    ) throws
        -> [PersistentHistoryTransaction]
    {
        guard case .transactions(let transactions) = try context.execute(request) else {
            Issue.record("a fetch did not return transactions")
            return []
        }
        return transactions
    }

    @Test func fetchAndDeleteTheHistory() throws {
        let writer = try DemoContexts.context(path, author: "a")
        let category = try DemoContexts.seed(writer, count: 2)
        let tasks = category.tasks.compactMap { $0 as? CDTask }.sorted { ($0.title ?? "") < ($1.title ?? "") }
        writer.transactionAuthor = "b"
        tasks[0].title = "Renamed"
        let renamed = try #require(try writer.save())
        writer.transactionAuthor = "a"
        let deletedID = tasks[1].objectID
        writer.delete(tasks[1])
        let deleted = try #require(try writer.save())

        let reader = try DemoContexts.context(path)
        let all = try transactions(reader, .fetchHistory(after: 0))
        #expect(all.count == 3)
        #expect(all.map(\.token) == all.map(\.token).sorted() && all.last?.token == deleted)
        #expect(all.map(\.author) == ["a", "b", "a"])
        #expect(all[0].changes.count == 3 && all[0].changes.allSatisfy { $0.changeType == .insert })
        let update = try #require(all[1].changes.first)
        #expect(all[1].changes.count == 1)
        #expect(update.changeType == .update && update.changedObjectID == tasks[0].objectID)
        #expect(update.updatedProperties == ["title"])
        let delete = try #require(all[2].changes.first { $0.changeType == .delete })
        #expect(delete.changedObjectID == deletedID)
        #expect(delete.tombstone?["id"] != nil)

        #expect(try transactions(reader, .fetchHistory(after: 0, author: "b")).map(\.token) == [renamed])
        #expect(try transactions(reader, .fetchHistory(after: renamed)).map(\.token) == [deleted])
        var limited = PersistentHistoryChangeRequest.fetchHistory(after: 0)
        limited.fetchLimit = 2
        #expect(try transactions(reader, limited).count == 2)
        #expect(try transactions(reader, .fetchHistory(after: Date.distantFuture)).isEmpty)
        #expect(try transactions(reader, .fetchHistory(after: Date.distantPast)).count == 3)

        // Deleting before the last token leaves it alone.
        #expect(try reader.execute(.deleteHistory(before: deleted)) == .deleted(count: 2, through: deleted - 1))
        #expect(try transactions(reader, .fetchHistory(after: 0)).map(\.token) == [deleted])
        #expect(try RawSQLite.rows(path, "SELECT count(*) FROM ACHANGE")[0][0] == .integer(Int64(all[2].changes.count)))
        #expect(try reader.execute(.deleteHistory(before: 1)) == .deleted(count: 0, through: nil))

        let readOnly = try ManagedObjectContext(storeAt: path, modelAt: Fixtures.demoModel, readOnly: true)
        #expect(throws: CoreDataError.self) { try readOnly.execute(.deleteHistory(before: deleted + 1)) }
        #expect(try transactions(readOnly, .fetchHistory(after: 0)).count == 1)
    }

    /// A context whose unmerged history another process deleted is told so once, then goes on.
    @Test func mergingPastDeletedHistoryIsAnError() throws {
        let holder = try DemoContexts.context(path)
        let writer = try DemoContexts.context(path, author: "writer")
        let category = try DemoContexts.seed(writer, count: 1)
        _ = try holder.mergeChangesFromStore()
        let held = try holder.existingObject(with: category.objectID)
        writer.delete(category)
        let deleted = try #require(try writer.save())
        #expect(try writer.execute(.deleteHistory(before: deleted + 1)) == .deleted(count: 2, through: deleted))
        let error = #expect(throws: CoreDataError.self) { try holder.mergeChangesFromStore() }
        guard case .historyExpired(_, let resumed)? = error else {
            Issue.record("not historyExpired: \(String(describing: error))")
            return
        }
        #expect(resumed == deleted)
        #expect(held.managedObjectContext === holder)
        #expect(try holder.mergeChangesFromStore().isEmpty)
        // A context opened on an emptied history starts after it: no false alarm.
        #expect(try DemoContexts.context(path).mergeChangesFromStore().isEmpty)
    }

    /// Deleting before a date takes only transactions saved before it, whatever their order; tokens at the
    /// ends of the range are no trap.
    @Test func deleteBeforeADateAndExtremeTokens() throws {
        let writer = try DemoContexts.context(path, author: "writer")
        let category = try DemoContexts.seed(writer, count: 1)
        category.name = "Renamed"
        let later = try #require(try writer.save())
        // The first transaction's clock ran ahead: it is not older than the date, though its token is.
        try RawSQLite.execute(path, "UPDATE ATRANSACTION SET ZTIMESTAMP = 9e9 WHERE Z_PK = \(later - 1)")
        #expect(try writer.execute(.deleteHistory(before: Date())) == .deleted(count: 1, through: later))
        #expect(try transactions(writer, .fetchHistory(after: 0)).map(\.token) == [later - 1])
        #expect(try writer.execute(.deleteHistory(before: Int64.min)) == .deleted(count: 0, through: nil))
        #expect(try transactions(writer, .fetchHistory(after: Int64.max)).isEmpty)
    }
}
