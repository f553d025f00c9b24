import CoexistModel
import CoexistStore
import Foundation
import TestSupport
import Testing

@testable import CoexistData

/// Identifiers without records, and limits that count only what a fetch returns.
@Suite struct FetchIdentifiersTests {
    let directory: TemporaryDirectory
    let context: ModelContext
    let tasks: [TaskRecord]

    init() throws {
        directory = try TemporaryDirectory()
        let path = try SharedStore.create(in: directory).new.path
        let model = try XCDataModelReader.read(path: Fixtures.demoModel)
        context = try ModelContext(try NewStore(path: path, model: model), author: "app")
        tasks = (0..<10).map { TaskRecord(title: "Task \($0)", priority: $0 % 4) }
        for task in tasks { context.insert(task) }
        try context.save()
    }

    @Test func identifiersMatchTheFetchInOrderWithoutMakingRecords() throws {
        let descriptor = FetchDescriptor<TaskRecord>(
            predicate: #Predicate { $0.priority >= 2 },
            sortBy: [SortDescriptor(\.priority, order: .reverse)],
            fetchLimit: 3,
            fetchOffset: 1
        )
        let identifiers = try context.fetchIdentifiers(descriptor)
        let records = try context.fetch(descriptor)
        #expect(identifiers.count == 3)
        #expect(identifiers == records.compactMap { context.persistentIdentifier(of: $0) })
        // A fresh context answers from SQL alone: it holds no record afterwards.
        let fresh = try ModelContext(context.store)
        #expect(try fresh.fetchIdentifiers(descriptor) == identifiers)
        #expect(fresh.registrations.isEmpty)
        #expect(try fresh.model(for: identifiers[0], as: TaskRecord.self)?.priority == 3)
        // A predicate evaluated in memory gives the same answer.
        let inMemory = FetchDescriptor<TaskRecord>(predicate: #Predicate { $0.title.count > 0 && $0.priority >= 2 })
        #expect(try context.fetchIdentifiers(inMemory).count == tasks.filter { $0.priority >= 2 }.count)
    }

    @Test func aLimitCountsOnlyRecordsNotDeletedInTheContext() throws {
        let byTitle = FetchDescriptor<TaskRecord>(sortBy: [SortDescriptor(\.priority)], fetchLimit: 4)
        let first = try context.fetch(byTitle)
        #expect(first.count == 4)
        context.delete(first[0])
        context.delete(first[1])
        #expect(try context.fetch(byTitle).count == 4)
        #expect(try context.fetchIdentifiers(byTitle).count == 4)
        #expect(try context.fetchCount(FetchDescriptor<TaskRecord>()) == 8)
        #expect(try context.fetchCount(byTitle) == 4)
        #expect(!(try context.fetchIdentifiers(byTitle)).contains(context.persistentIdentifier(of: first[0])!))
    }
}
