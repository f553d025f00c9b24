public import CoexistData
public import Foundation

/// The demo model's Task (`config/TaskModel.xcdatamodeld`, version 2.0.0) as a record of the SwiftData-shaped
/// adapter: the type the demo, the benchmark and the multi-process tests use on the new side.
public final class DemoTask: PersistentModel {
    /// The identity both schemas share.
    public var id: UUID
    /// What to do.
    public var title = ""
    /// Whether it is done.
    public var isCompleted = false
    /// When it was made.
    public var createdAt = Date()
    /// Higher first.
    public var priority = 0
    /// Free text.
    public var notes = ""
    /// The category it belongs to (its inverse: ``DemoCategory/tasks``).
    public var category: DemoCategory?

    /// The record's properties by model name.
    public static let schema = RecordSchema<DemoTask>(
        entity: "Task",
        [
            .attribute("id", \.id), .attribute("title", \.title), .attribute("isCompleted", \.isCompleted),
            .attribute("createdAt", \.createdAt), .attribute("priority", \.priority), .attribute("notes", \.notes),
            .toOne("category", \.category),
        ]
    )

    /// A new task with a new identity.
    public required init() { id = UUID() }

    /// A task a context fills from a stored row: no new identity is made (it is read right after).
    public required init(backingData: BackingData) { id = backingData.placeholderUUID }

    /// A task titled `title`.
    public convenience init(
        title: String,
        isCompleted: Bool = false,
        createdAt: Date = Date(),
        priority: Int = 0,
        category: DemoCategory? = nil
    ) {
        self.init()
        self.title = title
        self.isCompleted = isCompleted
        self.createdAt = createdAt
        self.priority = priority
        self.category = category
    }
}

/// The demo model's Category (version 2.0.0) as a record of the SwiftData-shaped adapter.
public final class DemoCategory: PersistentModel {
    /// The identity both schemas share.
    public var id: UUID
    /// The name shown.
    public var name = ""
    /// A color name.
    public var color = "blue"
    /// Its tasks (cascade: deleting a category deletes them).
    public var tasks: [DemoTask] = []

    /// The record's properties by model name.
    public static let schema = RecordSchema<DemoCategory>(
        entity: "Category",
        [.attribute("id", \.id), .attribute("name", \.name), .attribute("color", \.color), .toMany("tasks", \.tasks)]
    )

    /// A new category with a new identity.
    public required init() { id = UUID() }

    /// A category a context fills from a stored row: no new identity is made (it is read right after).
    public required init(backingData: BackingData) { id = backingData.placeholderUUID }

    /// A category named `name`.
    public convenience init(name: String, color: String = "blue") {
        self.init()
        self.name = name
        self.color = color
    }
}
