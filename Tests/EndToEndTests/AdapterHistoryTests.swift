import CoexistCoreData
import Foundation
import TestSupport
import Testing

/// An app's `deleteHistory` never deletes what coexistd has not mirrored yet.
@Suite struct AdapterHistoryTests {
    @Test func deleteHistoryStopsAtTheBridgesCursor() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("History.sqlite")
        let model = Fixtures.demoModel
        #expect(try ProductProcess.run("coexistctl", ["create", path, "--model", model]).status == 0)
        let context = try ManagedObjectContext(storeAt: path, modelAt: model)
        func insertTask(_ title: String) throws -> Int64 {
            let task = context.insertNewObject(forEntityName: "Task")
            task.setValue(UUID(), forKey: "id")
            task.setValue(title, forKey: "title")
            task.setValue(Date(), forKey: "createdAt")
            return try #require(try context.save())
        }
        let mirrored = try insertTask("mirrored")
        let daemon = ["--database", path, "--model", model, "--socket", directory.file("s.sock"), "--once"]
        #expect(try ProductProcess.run("coexistd", daemon).status == 0)
        let cursor = try #require(
            try RawSQLite.rows(path, "SELECT cursor FROM coexist_bridge WHERE id = 1").first?[0].integerValue
        )
        #expect(cursor >= mirrored)
        let pending = try insertTask("not mirrored yet")
        guard case .deleted(let count, let through) = try context.execute(.deleteHistory(before: pending + 1)) else {
            Issue.record("no delete result")
            return
        }
        #expect(through == cursor && count > 0)
        // The transaction coexistd has not mirrored is still there, and it mirrors it afterwards.
        #expect(
            try RawSQLite.rows(path, "SELECT count(*) FROM ATRANSACTION WHERE Z_PK = \(pending)")[0][0] == .integer(1)
        )
        #expect(try ProductProcess.run("coexistd", daemon).status == 0)
        let titles = try RawSQLite.rows(path, "SELECT title FROM task ORDER BY title").compactMap { $0[0].textValue }
        #expect(titles == ["mirrored", "not mirrored yet"])
    }
}
