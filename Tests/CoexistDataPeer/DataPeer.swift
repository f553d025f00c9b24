import CoexistData
import CoexistDemo
import Foundation

// coexist-data-peer STORE MODEL SOCKET: a process of the new stack for the two-adapter tests. It holds
// records through the SwiftData-shaped adapter and follows coexistd's socket; one command a line on
// standard input, one reply a line on standard output:
//   hold ID            fetch the Task with that id and hold it          → held TITLE
//   rename ID TITLE    change the held task's title and save            → saved TOKEN
//   relate ID NAME     put the held task in a new category NAME, save   → saved TOKEN
//   delete ID          delete the held task and save                    → saved TOKEN
//   next               the next remote change (20 s at most)            → {"token":…,"author":…,"inserted":[ids],
//                      "updated":[ids],"deleted":[ids],"held":{"id":{"title":…,"category":…}|null}} or none

struct PeerError: Error, CustomStringConvertible {
    var description: String
}

/// The peer: its context, the remote changes it follows, the tasks it holds.
@main struct DataPeer {
    let context: ModelContext
    var held: [String: DemoTask] = [:]

    static func main() async throws {
        let arguments = CommandLine.arguments
        guard arguments.count == 4 else {
            FileHandle.standardError.write(Data("usage: coexist-data-peer STORE MODEL SOCKET\n".utf8))
            exit(64)
        }
        let container = try ModelContainer(
            configuration: ModelConfiguration(
                url: URL(fileURLWithPath: arguments[1]),
                modelURL: URL(fileURLWithPath: arguments[2]),
                author: "new-app"
            )
        )
        var peer = DataPeer(context: container.mainContext)
        let changes = try peer.context.remoteChanges(from: .coexistd(socket: arguments[3]))
        var iterator = changes.makeAsyncIterator()
        while let line = readLine() {
            do {
                if line == "next" {
                    let watcher = changes.watcher
                    let deadline = Task {
                        try await Task.sleep(for: .seconds(20))
                        watcher.stop()
                    }
                    let change = try await iterator.next()
                    deadline.cancel()
                    reply(try change.map(peer.describe) ?? "none")
                } else {
                    reply(try peer.run(line))
                }
            } catch {
                reply("error \(error)")
            }
        }
    }

    static func reply(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    func heldTask(_ id: String) throws -> DemoTask {
        guard let task = held[id] else { throw PeerError(description: "no task \(id) held") }
        return task
    }

    func saved() throws -> String { "saved \(try context.save() ?? -1)" }

    /// One command other than `next`.
    mutating func run(_ line: String) throws -> String {
        let words = line.split(separator: " ", maxSplits: 2).map(String.init)
        switch (words.first, words.count) {
        case ("hold", 2):
            let id = UUID(uuidString: words[1]) ?? UUID()
            let found = try context.fetch(FetchDescriptor<DemoTask>(predicate: #Predicate { $0.id == id }))
            guard let task = found.first else { throw PeerError(description: "no task \(words[1])") }
            held[words[1]] = task
            return "held \(task.title)"
        case ("rename", 3):
            try heldTask(words[1]).title = words[2]
            return try saved()
        case ("relate", 3):
            let category = DemoCategory()
            category.name = words[2]
            context.insert(category)
            try heldTask(words[1]).category = category
            return try saved()
        case ("delete", 2):
            context.delete(try heldTask(words[1]))
            return try saved()
        default:
            return "error unknown command: \(line)"
        }
    }

    func describe(_ change: ModelRemoteChange) throws -> String {
        var heldState: [String: Any] = [:]
        for (id, task) in held {
            heldState[id] =
                context.persistentIdentifier(of: task) == nil
                ? NSNull() : ["title": task.title, "category": task.category?.name ?? NSNull()] as [String: Any]
        }
        let object: [String: Any] = [
            "token": change.token, "author": change.author ?? NSNull(),
            "inserted": change.inserted.map(\.id).sorted(), "updated": change.updated.map(\.id).sorted(),
            "deleted": change.deleted.map(\.id).sorted(), "held": heldState,
        ]
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }
}
