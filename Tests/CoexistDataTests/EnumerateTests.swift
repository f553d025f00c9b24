import CoexistModel
import CoexistStore
import Foundation
import TestSupport
import Testing

@testable import CoexistData

/// Enumeration in batches: the same records as a fetch, memory bounded by the batch, mutations kept only
/// when allowed.
@Suite struct EnumerateTests {
    let directory: TemporaryDirectory
    let store: NewStore

    init() throws {
        directory = try TemporaryDirectory()
        let path = try SharedStore.create(in: directory).new.path
        store = try NewStore(path: path, model: try XCDataModelReader.read(path: Fixtures.demoModel))
        let writer = try ModelContext(store, author: "seed")
        for index in 0..<250 { writer.insert(TaskRecord(title: "Task \(index)", priority: index % 7)) }
        try writer.save()
    }

    /// A new record the app attached to a held one before enumerating is the app's change, not the block's:
    /// an enumeration whose block changes nothing goes through, and the record stays for the next save.
    @Test func aRecordReachedBeforeEnumeratingIsNotTheBlocksChange() throws {
        let context = try ModelContext(store)
        let category = CategoryRecord(name: "Held")
        context.insert(category)
        try context.save()
        category.tasks.append(TaskRecord(title: "Attached"))
        var count = 0
        try context.enumerate(FetchDescriptor<TaskRecord>(), batchSize: 40) { _ in count += 1 }
        #expect(count == 250)
        try context.save()
        #expect(
            try ModelContext(store).fetch(FetchDescriptor<CategoryRecord>()).first?.tasks.map(\.title) == ["Attached"]
        )
    }

    @Test func theSameRecordsAsAFetchABatchAtATime() throws {
        let context = try ModelContext(store)
        var titles: [String] = []
        var largest = 0
        try context.enumerate(FetchDescriptor<TaskRecord>(), batchSize: 40) { task in
            titles.append(task.title)
            largest = max(largest, context.registrations.count)
        }
        #expect(titles == (0..<250).map { "Task \($0)" })
        #expect(largest <= 40)
        #expect(context.registrations.isEmpty)

        let descriptors = [
            FetchDescriptor<TaskRecord>(
                predicate: #Predicate { $0.priority >= 3 },
                sortBy: [SortDescriptor(\.priority, order: .reverse)],
                fetchLimit: 30,
                fetchOffset: 10
            ),
            FetchDescriptor<TaskRecord>(predicate: #Predicate { $0.title.count > 6 && $0.priority < 2 }),
            FetchDescriptor<TaskRecord>(sortBy: [SortDescriptor(\.title)], fetchLimit: 5),
        ]
        for descriptor in descriptors {
            let fetched = try ModelContext(store).fetch(descriptor).map(\.title)
            var enumerated: [String] = []
            try ModelContext(store).enumerate(descriptor, batchSize: 7) { enumerated.append($0.title) }
            #expect(enumerated == fetched)
            #expect(!fetched.isEmpty)
        }
    }

    @Test func aFetchInsideTheBlockLeavesTheEnumerationAlone() throws {
        let context = try ModelContext(store)
        var seen = 0
        try context.enumerate(FetchDescriptor<TaskRecord>(), batchSize: 50) { _ in
            seen += 1
            if seen % 60 == 0 { _ = try context.fetch(FetchDescriptor<TaskRecord>()) }
        }
        #expect(seen == 250)
    }

    @Test func mutationsStayOnlyWhenAllowed() throws {
        let context = try ModelContext(store)
        #expect(throws: StoreError.self) {
            try context.enumerate(FetchDescriptor<TaskRecord>(), batchSize: 20) { $0.priority += 100 }
        }
        // The batch that threw keeps its change pending; the rest of the file was never touched.
        #expect(context.registrations.values.filter { context.isChanged($0) }.count == 20)
        context.rollback()
        let allowing = try ModelContext(store)
        try allowing.enumerate(FetchDescriptor<TaskRecord>(), batchSize: 20, allowEscapingMutations: true) { task in
            if task.priority == 0 { task.notes = "checked" }
        }
        #expect(allowing.registrations.count == 36)
        try allowing.save()
        let checked = try ModelContext(store).fetchCount(
            FetchDescriptor<TaskRecord>(predicate: #Predicate { $0.notes == "checked" })
        )
        #expect(checked == 36)
    }

    /// Records kept for a later save keep what they reach: the save neither duplicates nor fails.
    @Test func keptRecordsKeepWhatTheyReach() throws {
        let writer = try ModelContext(store, author: "seed")
        let category = CategoryRecord(name: "Errands")
        for index in 0..<3 { writer.insert(TaskRecord(title: "Errand \(index)", category: category)) }
        try writer.save()

        let context = try ModelContext(store)
        let errands = FetchDescriptor<TaskRecord>(predicate: #Predicate { $0.title.starts(with: "Errand") })
        try context.enumerate(errands, batchSize: 2, allowEscapingMutations: true) { $0.isCompleted = true }
        try context.save()
        let reader = try ModelContext(store)
        #expect(try reader.fetchCount(FetchDescriptor<CategoryRecord>()) == 1)
        #expect(try reader.fetchCount(errands) == 3)
        #expect(try reader.fetch(errands).allSatisfy { $0.isCompleted && $0.category?.name == "Errands" })
    }
}
