import CoexistHistory
import CoexistLegacyStore
import Foundation
import TestSupport
import Testing

/// Two processes saving to one store at once: every save lands, history is complete and in commit order,
/// and SQLITE_BUSY is absorbed by the busy handler.
@Suite struct ConcurrentWritersTests {
    @Test func twoProcessesSaveConcurrently() throws {
        let directory = try TemporaryDirectory()
        let path = try DemoStore.create(in: directory).path
        let count = 150
        let writers = try ["alpha", "beta"].map { author -> Process in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: ProductProcess.productsDirectory + "/coexist-test-helper")
            process.arguments = ["legacy-writer", path, String(count), author]
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            return process
        }
        for writer in writers { writer.waitUntilExit() }
        #expect(writers.map(\.terminationStatus) == [0, 0])

        let store = try LegacyStore(path: path)
        #expect(try store.objects(of: "Task").count == 2 * count)
        let reader = try HistoryReader(store: store)
        let history = try reader.transactions(after: 0, limit: 10_000)
        #expect(history.map(\.token) == Array(1...Int64(2 * count)))
        for author in ["alpha", "beta"] {
            let mine = history.filter { $0.author == author }
            #expect(mine.count == count)
            // Each writer's saves appear in the order it made them, each with its insert (and the update).
            let titles = try mine.map { transaction -> String in
                let insert = try #require(transaction.changes.first { $0.type == .insert })
                let object = try #require(try store.object(ObjectID(entity: "Task", pk: insert.objectPK ?? 0)))
                return object.attributes["title"].flatMap { if case .string(let text) = $0 { text } else { nil } } ?? ""
            }
            #expect(titles == (0..<count).map { "\(author) \($0)" })
            #expect(mine.dropFirst().allSatisfy { $0.changes.count == 2 && $0.changes.last?.properties == ["notes"] })
        }
        let timestamps = history.map(\.timestamp)
        #expect(timestamps == timestamps.sorted())
    }
}
