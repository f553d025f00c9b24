import CoexistData
import Foundation

/// The guide's Task model (V2) as coexist records.
final class TaskRecord: PersistentModel {
    var id = UUID()
    var title = ""
    var isCompleted = false
    var createdAt = Date()
    var priority = 0
    var notes = ""
    var category: CategoryRecord?

    static let schema = RecordSchema<TaskRecord>(
        entity: "Task",
        [
            .attribute("id", \.id), .attribute("title", \.title), .attribute("isCompleted", \.isCompleted),
            .attribute("createdAt", \.createdAt), .attribute("priority", \.priority), .attribute("notes", \.notes),
            .toOne("category", \.category),
        ]
    )

    required init() {}

    convenience init(
        title: String,
        isCompleted: Bool = false,
        createdAt: Date = Date(),
        priority: Int = 0,
        category: CategoryRecord? = nil
    ) {
        self.init()
        self.title = title
        self.isCompleted = isCompleted
        self.createdAt = createdAt
        self.priority = priority
        self.category = category
    }
}

/// The guide's Category model (V2).
final class CategoryRecord: PersistentModel {
    var id = UUID()
    var name = ""
    var color = "blue"
    var tasks: [TaskRecord] = []

    static let schema = RecordSchema<CategoryRecord>(
        entity: "Category",
        [.attribute("id", \.id), .attribute("name", \.name), .attribute("color", \.color), .toMany("tasks", \.tasks)]
    )

    required init() {}

    convenience init(name: String, color: String = "blue") {
        self.init()
        self.name = name
        self.color = color
    }
}
