import CoexistCoreData
import Foundation

final class Task: ManagedObject {
    override class var entityName: String { "Task" }
    var title: String? {
        get { value(forKey: "title") as? String }
        set { setValue(newValue, forKey: "title") }
    }
    var priority: Int16 {
        get { value(forKey: "priority") as? Int16 ?? 0 }
        set { setValue(newValue, forKey: "priority") }
    }
    var category: Category? {
        get { value(forKey: "category") as? Category }
        set { setValue(newValue, forKey: "category") }
    }
}

final class Category: ManagedObject {
    override class var entityName: String { "Category" }
    var name: String? {
        get { value(forKey: "name") as? String }
        set { setValue(newValue, forKey: "name") }
    }
    var tasks: Set<ManagedObject> { value(forKey: "tasks") as? Set<ManagedObject> ?? [] }
}

@main struct TaskList {
    static func main() async throws {
        let context = try ManagedObjectContext(
            storeAt: "/var/lib/app/Tasks.sqlite",
            modelAt: "/usr/share/app/TaskModel.xcdatamodeld"
        )
        context.register(Task.self)
        context.register(Category.self)
        context.transactionAuthor = "legacy-app"
        context.mergePolicy = .storeWins

        // Insert and save: one SQLite transaction, one history token.
        let errands = Category(context: context)
        errands.name = "Errands"
        errands.setValue(UUID(), forKey: "id")
        let task = Task(context: context)
        task.title = "Buy milk"
        task.setValue(UUID(), forKey: "id")
        task.setValue(Date(), forKey: "createdAt")
        task.category = errands  // errands.tasks holds it at once
        let token = try context.save()
        print("saved as token", token ?? 0)

        // Fetch with a Core Data predicate; it runs in SQLite.
        let request = FetchRequest<Task>(entityName: "Task")
        request.predicate = try FetchPredicate(format: "category.name ==[cd] %@ AND priority >= %d", "errands", 0)
        request.sortDescriptors = [FetchSortDescriptor(key: "title", caseInsensitive: true)]
        for task in try context.fetch(request) { print(task.title ?? "") }

        // Follow every commit of the other stack (mirrored by coexistd) and of other processes.
        for try await change in try context.remoteChanges(from: .coexistd(socket: "/run/coexist/coexist.sock")) {
            print("token", change.token, "by", change.author ?? "-", "updated", change.updated.count)
            print("the held task now reads", task.title ?? "(deleted)")
        }
    }
}
