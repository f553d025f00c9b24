import CoexistData
import Foundation

final class Task: PersistentModel {
    var id: UUID
    var title = ""
    var isCompleted = false
    var createdAt = Date()
    var priority = 0
    var notes = ""
    var category: Category?
    static let schema = RecordSchema<Task>(
        entity: "Task",
        [
            .attribute("id", \.id), .attribute("title", \.title), .attribute("isCompleted", \.isCompleted),
            .attribute("createdAt", \.createdAt), .attribute("priority", \.priority), .attribute("notes", \.notes),
            .toOne("category", \.category),
        ]
    )
    required init() { id = UUID() }
    // Fetched tasks: the context sets every property next, so no new UUID is made.
    required init(backingData: BackingData) { id = backingData.placeholderUUID }
}

final class Category: PersistentModel {
    var id = UUID()
    var name = ""
    var color = "blue"
    var tasks: [Task] = []
    static let schema = RecordSchema<Category>(
        entity: "Category",
        [
            .attribute("id", \.id), .attribute("name", \.name), .attribute("color", \.color),
            .toMany("tasks", \.tasks),
        ]
    )
    required init() {}
}

@main struct TaskBoard {
    static func main() async throws {
        let container = try ModelContainer(
            configuration: ModelConfiguration(
                url: URL(fileURLWithPath: "/var/lib/app/Tasks.sqlite"),
                modelURL: URL(fileURLWithPath: "/usr/share/app/TaskModel.xcdatamodeld"),
                author: "new-app"
            )
        )
        let context = container.mainContext

        // Save in a transaction: all of it, or nothing and the context rolled back.
        let home = Category()
        home.name = "Home"
        let token = try context.transaction {
            let task = Task()
            task.title = "Water the plants"
            task.category = home
            context.insert(task)
        }
        print("saved as token", token ?? 0)

        // Fetch: predicates run in SQL where they translate; filters compose at run time.
        var filters: [Filter<Task>] = [.where(#Predicate { !$0.isCompleted })]
        filters.append(.where(#Predicate { $0.priority >= 1 }))
        let pending = try context.fetch(
            FetchDescriptor(filter: .all(filters), sortBy: [SortDescriptor(\.createdAt, order: .reverse)])
        )
        print(pending.map(\.title))

        // A million tasks, a thousand at a time, in flat memory.
        var count = 0
        try context.enumerate(FetchDescriptor<Task>(), batchSize: 1_000) { _ in count += 1 }

        // What the Core Data app commits, mirrored by coexistd, as it happens.
        for try await change in try context.remoteChanges(from: .coexistd(socket: "/run/coexist/coexist.sock")) {
            print("token", change.token, "inserted", change.inserted.count, "deleted", change.deleted.count)
        }
    }
}
