import CoexistHistory
import CoexistLegacyStore
import CoexistStore
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

/// The legacy store and the new store saving concurrently from two processes: one token sequence, strictly
/// increasing, exactly one token per save.
@Suite struct BothSidesConcurrentTests {
    @Test func legacyAndNewWritersShareOneTokenSequence() throws {
        let directory = try TemporaryDirectory()
        let path = try SharedStore.create(in: directory).legacy.path
        let count = 150
        let writers = try [("legacy-writer", "old"), ("new-writer", "new")].map { mode, author -> Process in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: ProductProcess.productsDirectory + "/coexist-test-helper")
            process.arguments = [mode, path, String(count), author]
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            return process
        }
        for writer in writers { writer.waitUntilExit() }
        #expect(writers.map(\.terminationStatus) == [0, 0])
        let store = try LegacyStore(path: path)
        let history = try HistoryReader(store: store).transactions(after: 0, limit: 10_000)
        #expect(history.map(\.token) == Array(1...Int64(2 * count)))
        let old = history.filter { $0.author == "old" }
        let new = history.filter { $0.author == "new" }
        #expect(old.count == count && new.count == count)
        #expect(old.allSatisfy { $0.side == .legacy && $0.changes.allSatisfy { $0.side == .legacy } })
        #expect(new.allSatisfy { $0.side == .new && $0.changes.allSatisfy { $0.side == .new } })
        #expect(new.first?.changes.map(\.type) == [.insert])
        #expect(new.dropFirst().allSatisfy { $0.changes.map(\.type) == [.insert, .update] })
        #expect(try store.connection.scalar("SELECT count(*) FROM task") == .integer(Int64(count)))
        #expect(try store.connection.scalar("SELECT count(*) FROM ZTASK") == .integer(Int64(count)))
    }
}
