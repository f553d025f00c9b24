import CoexistData
import Foundation

// Attributes as fields and relationships as relations, kept in the record's backing data: a fetch fills
// them at once.
final class Task: BackedModel {
    let persistentBackingData = BackingData()
    @Field var id = UUID()
    @Field var title = ""
    @Field var isCompleted = false
    @Field var createdAt = Date()
    @Field var priority = 0
    @Field var notes = ""
    @Relation var category: Category?
    static let schema = RecordSchema<Task>(
        entity: "Task",
        [
            .attribute("id", \.id), .attribute("title", \.title), .attribute("isCompleted", \.isCompleted),
            .attribute("createdAt", \.createdAt), .attribute("priority", \.priority), .attribute("notes", \.notes),
            .toOne("category", \.category),
        ]
    )
    required init() {}
}

// Attributes as plain stored properties: a fetch sets each through its key path.
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
