import CoexistData
import CoexistModel
import CoexistStore
import Foundation
import TestSupport
import Testing

/// Autosave on the main actor: pending changes reach the file after the interval, without a save call, and
/// stop doing so when it is turned off.
@Suite struct AutosaveTests {
    let file: SharedDemoFile
    var path: String { file.path }

    init() throws { file = try SharedDemoFile() }

    func context(_ author: String) throws -> ModelContext { try file.context(author) }

    /// How many tasks another connection reads, polled until it is `expected` or 10 s have passed.
    func storedTasks(reaching expected: Int) async throws -> Int {
        let reader = try context("reader")
        for _ in 0..<1_000 {
            let count = try reader.fetchCount(FetchDescriptor<TaskRecord>())
            if count == expected { return count }
            try await Task.sleep(for: .milliseconds(10))
        }
        return try reader.fetchCount(FetchDescriptor<TaskRecord>())
    }

    @MainActor @Test func pendingChangesAreSavedAfterTheInterval() async throws {
        let context = try context("app")
        #expect(!context.autosaveEnabled)
        context.autosaveInterval = .milliseconds(200)
        context.autosaveEnabled = true
        let task = TaskRecord(title: "Autosaved")
        context.insert(task)
        // Not before the interval: the change is still only the context's.
        #expect(try self.context("reader").fetchCount(FetchDescriptor<TaskRecord>()) == 0)
        #expect(try await storedTasks(reaching: 1) == 1)
        #expect(!context.hasChanges)
        #expect(context.lastAutosaveError == nil)

        task.title = "Changed, then autosaved"
        try await Task.sleep(for: .milliseconds(600))
        #expect(!context.hasChanges)
        let stored = try self.context("reader").fetch(FetchDescriptor<TaskRecord>())
        #expect(stored.map(\.title) == ["Changed, then autosaved"])

        context.autosaveEnabled = false
        context.insert(TaskRecord(title: "Not autosaved"))
        try await Task.sleep(for: .milliseconds(600))
        #expect(context.hasChanges)
        #expect(try await storedTasks(reaching: 1) == 1)
    }
}
