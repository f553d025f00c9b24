import CoexistCoreData
import Foundation
import TestSupport

/// Contexts on a demo store with the demo model's classes registered, and a seeded category.
enum DemoContexts {
    static func context(_ path: String, author: String = "test") throws -> ManagedObjectContext {
        let context = try ManagedObjectContext(storeAt: path, modelAt: Fixtures.demoModel)
        context.register(CDTask.self)
        context.register(CDCategory.self)
        context.transactionAuthor = author
        return context
    }

    /// A saved category with `count` tasks, titled "Task 0"….
    static func seed(_ context: ManagedObjectContext, count: Int) throws -> CDCategory {
        let category = CDCategory(context: context)
        category.name = "Errands"
        category.setValue(UUID(), forKey: "id")
        for index in 0..<count {
            let task = CDTask(context: context)
            task.title = "Task \(index)"
            task.setValue(UUID(), forKey: "id")
            task.setValue(Date(timeIntervalSinceReferenceDate: 800_000_000), forKey: "createdAt")
            task.priority = Int16(index)
            task.category = category
        }
        try context.save()
        return category
    }
}
