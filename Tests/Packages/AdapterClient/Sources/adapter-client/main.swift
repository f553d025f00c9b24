// Writes one category and task with each adapter, then counts what each side holds.
// Usage: adapter-client STORE MODEL

import CoexistCoreData
import CoexistData
import Foundation

final class TaskRecord: PersistentModel {
    var id = UUID()
    var title = ""
    var isCompleted = false
    var createdAt = Date()
    var priority = 0
    var notes = ""

    static let schema = RecordSchema<TaskRecord>(
        entity: "Task",
        [
            .attribute("id", \.id), .attribute("title", \.title), .attribute("isCompleted", \.isCompleted),
            .attribute("createdAt", \.createdAt), .attribute("priority", \.priority), .attribute("notes", \.notes),
        ]
    )

    required init() {}
}

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    FileHandle.standardError.write(Data("usage: adapter-client STORE MODEL\n".utf8))
    exit(64)
}
do {
    let legacy = try ManagedObjectContext(storeAt: arguments[1], modelAt: arguments[2])
    legacy.transactionAuthor = "legacy-app"
    let task = legacy.insertNewObject(forEntityName: "Task")
    task.setValue(UUID(), forKey: "id")
    task.setValue("From the legacy adapter", forKey: "title")
    task.setValue(Date(), forKey: "createdAt")
    try legacy.save()
    let request = FetchRequest<ManagedObject>(entityName: "Task")
    request.predicate = try FetchPredicate(format: "title BEGINSWITH[c] %@", "from")
    print("legacy tasks: \(try legacy.count(for: request))")

    let container = try ModelContainer(
        configuration: ModelConfiguration(
            url: URL(fileURLWithPath: arguments[1]),
            modelURL: URL(fileURLWithPath: arguments[2]),
            author: "new-app"
        )
    )
    let context = container.mainContext
    let record = TaskRecord()
    record.title = "From the new adapter"
    context.insert(record)
    try context.save()
    print("new tasks: \(try context.fetchCount(FetchDescriptor<TaskRecord>()))")
} catch {
    FileHandle.standardError.write(Data("adapter-client: \(error)\n".utf8))
    exit(1)
}
