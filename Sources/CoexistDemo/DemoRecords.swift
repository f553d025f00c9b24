public import CoexistData
public import Foundation

/// The demo model's Task (`config/TaskModel.xcdatamodeld`, version 2.0.0) as a record of the SwiftData-shaped
/// adapter: the type the demo, the benchmark and the multi-process tests use on the new side.
public final class DemoTask: PersistentModel {
    public var id = UUID()
    public var title = ""
    public var isCompleted = false
    public var createdAt = Date()
    public var priority = 0
    public var notes = ""
    public var category: DemoCategory?

    public static let schema = RecordSchema<DemoTask>(
        entity: "Task",
        [
            .attribute("id", \.id), .attribute("title", \.title), .attribute("isCompleted", \.isCompleted),
            .attribute("createdAt", \.createdAt), .attribute("priority", \.priority), .attribute("notes", \.notes),
            .toOne("category", \.category),
        ]
    )

    public required init() {}

    /// A task titled `title`.
    public convenience init(title: String, priority: Int = 0, category: DemoCategory? = nil) {
        self.init()
        self.title = title
        self.priority = priority
        self.category = category
    }
}

/// The demo model's Category (version 2.0.0) as a record of the SwiftData-shaped adapter.
public final class DemoCategory: PersistentModel {
    public var id = UUID()
    public var name = ""
    public var color = "blue"
    public var tasks: [DemoTask] = []

    public static let schema = RecordSchema<DemoCategory>(
        entity: "Category",
        [.attribute("id", \.id), .attribute("name", \.name), .attribute("color", \.color), .toMany("tasks", \.tasks)]
    )

    public required init() {}

    /// A category named `name`.
    public convenience init(name: String) {
        self.init()
        self.name = name
    }
}
