import CoexistCoreData
import CoexistSQLite
import Foundation
import TestSupport
import Testing

/// How a fetch reads its rows: many objects' values side by side in shared blocks, each object its own;
/// a damaged row refused, not passed over.
@Suite struct FetchRowsTests {
    let directory: TemporaryDirectory
    let path: String

    init() throws {
        directory = try TemporaryDirectory()
        path = try DemoStore.create(in: directory).path
    }

    /// 1,500 objects' values fill several blocks (they grow from 64 values to 4,096): each object answers
    /// its own, whichever block holds them.
    @Test func eachOfManyFetchedObjectsAnswersItsOwnValues() throws {
        let writer = try DemoContexts.context(path)
        for index in 0..<1_500 {
            let task = CDTask(context: writer)
            task.title = "Task \(index)"
            task.setValue(UUID(), forKey: "id")
            task.setValue(Date(timeIntervalSinceReferenceDate: 800_000_000), forKey: "createdAt")
            task.priority = Int16(index)
        }
        try writer.save()
        let reader = try DemoContexts.context(path)
        let request = FetchRequest<CDTask>(entityName: "Task")
        request.sortDescriptors = [FetchSortDescriptor(key: "priority")]
        let tasks = try reader.fetch(request)
        #expect(tasks.count == 1_500)
        for (index, task) in tasks.enumerated() {
            #expect(task.title == "Task \(index)" && task.priority == Int16(index) && task.version == 1)
        }
    }

    /// A store whose `Z_PRIMARYKEY` gives Task a sub-entity the model does not have (a newer app's, sharing
    /// ZTASK): Task is not alone in its table, so its rows are still chosen by entity, and the fetches of
    /// the model's Tasks pass the other entity's row over, as before.
    @Test func aSubEntityOnlyTheStoreKnowsKeepsTheEntityCheck() throws {
        _ = try DemoContexts.seed(try DemoContexts.context(path), count: 3)
        let connection = try Connection(path: path)
        let task = try #require(
            try connection.scalar("SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Task'").integerValue
        )
        let special = try #require(try connection.scalar("SELECT max(Z_ENT) + 1 FROM Z_PRIMARYKEY").integerValue)
        try connection.run(
            "INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, 'SpecialTask', ?, 0)",
            [.integer(special), .integer(task)]
        )
        try connection.run(
            "INSERT INTO ZTASK (Z_PK, Z_ENT, Z_OPT, ZTITLE) VALUES ((SELECT max(Z_PK) + 1 FROM ZTASK), ?, 1, 'x')",
            [.integer(special)]
        )
        let reader = try DemoContexts.context(path)
        let request = FetchRequest<CDTask>(entityName: "Task")
        #expect(try reader.fetch(request).count == 3)
        #expect(try reader.fetchObjectIDs(request).count == 3)
        #expect(try reader.count(for: request) == 3)
    }

    /// 1,500 tasks added to one category, each keeping the inverse up to date from the unsaved members as
    /// they are held, all saved and read back by another context.
    @Test func manyObjectsAddedToOneOwnerSave() throws {
        _ = try DemoContexts.seed(try DemoContexts.context(path), count: 1_500)
        let reader = try DemoContexts.context(path)
        let category = try #require(try reader.fetch(FetchRequest<CDCategory>(entityName: "Category")).first)
        #expect(category.tasks.count == 1_500)
    }

    /// The Task table holds Tasks only, so a fetch reads it without asking each row's entity in SQL: a row
    /// whose `Z_ENT` names another entity (a damaged store) fails the fetch and the identity-only fetch,
    /// naming the row, instead of being passed over or read as that other entity.
    @Test func aRowOfAnotherEntityInATableOfOneEntityIsRefused() throws {
        _ = try DemoContexts.seed(try DemoContexts.context(path), count: 3)
        let connection = try Connection(path: path)
        let category = try #require(
            try connection.scalar("SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Category'").integerValue
        )
        try connection.run("UPDATE ZTASK SET Z_ENT = ? WHERE Z_PK = 2", [.integer(category)])
        let reader = try DemoContexts.context(path)
        let request = FetchRequest<CDTask>(entityName: "Task")
        #expect {
            try reader.fetch(request)
        } throws: {
            "\($0)".contains("ZTASK row Z_PK=2: Z_ENT \(category) is not an entity of the model stored in ZTASK")
        }
        #expect(reader.registeredObjects.isEmpty)
        #expect {
            try reader.fetchObjectIDs(request)
        } throws: {
            "\($0)".contains("ZTASK row Z_PK=2: Z_ENT \(category)")
        }
        try connection.run("UPDATE ZTASK SET Z_ENT = (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Task')")
        #expect(try reader.fetch(request).count == 3)
    }
}
