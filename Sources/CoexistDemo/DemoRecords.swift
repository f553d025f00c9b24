public import CoexistData
public import Foundation

/// The demo model's Task (`config/TaskModel.xcdatamodeld`, version 2.0.0) as a record of the SwiftData-shaped
/// adapter: the type the demo, the benchmark and the multi-process tests use on the new side. Its attributes
/// are fields and its relationship a relation, kept in its backing data.
public final class DemoTask: BackedModel {
    /// Where its fields keep their values.
    public let persistentBackingData: BackingData
    /// The identity both schemas share.
    @Field public var id = UUID()
    /// What to do.
    @Field public var title = ""
    /// Whether it is done.
    @Field public var isCompleted = false
    /// When it was made.
    @Field public var createdAt = Date()
    /// Higher first.
    @Field public var priority = 0
    /// Free text.
    @Field public var notes = ""
    /// The category it belongs to (its inverse: ``DemoCategory/tasks``).
    @Relation public var category: DemoCategory?

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
    public required init() { persistentBackingData = BackingData() }

    /// A task a context is about to fill from a stored row: it keeps the backing data the context gives.
    public required init(backingData: BackingData) { persistentBackingData = backingData }

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
public final class DemoCategory: BackedModel {
    /// Where its fields keep their values.
    public let persistentBackingData: BackingData
    /// The identity both schemas share.
    @Field public var id = UUID()
    /// The name shown.
    @Field public var name = ""
    /// A color name.
    @Field public var color = "blue"
    /// Its tasks (cascade: deleting a category deletes them).
    @Relation public var tasks: [DemoTask]

    /// The record's properties by model name.
    public static let schema = RecordSchema<DemoCategory>(
        entity: "Category",
        [.attribute("id", \.id), .attribute("name", \.name), .attribute("color", \.color), .toMany("tasks", \.tasks)]
    )

    /// A new category with a new identity.
    public required init() { persistentBackingData = BackingData() }

    /// A category a context is about to fill from a stored row: it keeps the backing data the context gives.
    public required init(backingData: BackingData) { persistentBackingData = backingData }

    /// A category named `name`.
    public convenience init(name: String, color: String = "blue") {
        self.init()
        self.name = name
        self.color = color
    }
}
