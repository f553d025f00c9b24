import CoexistHistory
import CoexistLegacyStore
import CoexistRuntime
import CoexistSQLite
import CoexistStore

#if canImport(Glibc)
import Glibc
#endif

// A writer process for multi-process tests:
//   coexist-test-helper legacy-writer|new-writer STORE COUNT AUTHOR
// saves COUNT transactions to the demo-model store STORE (through the legacy store or the new store), each
// inserting one Task titled "AUTHOR i" and changing the previous one, then prints "done COUNT".
let arguments = CommandLine.arguments
guard arguments.count == 5, ["legacy-writer", "new-writer"].contains(arguments[1]), let count = Int(arguments[3]) else {
    StandardStreams.error("usage: coexist-test-helper legacy-writer|new-writer STORE COUNT AUTHOR")
    exit(64)
}
let author = arguments[4]
if arguments[1] == "new-writer" {
    do {
        let model = try LegacyStore(path: arguments[2]).model
        guard let model else { throw LegacyStoreError.modelMismatch(path: arguments[2], detail: "no model") }
        let store = try NewStore(
            path: arguments[2],
            model: model,
            options: OpenOptions(busyTimeoutMilliseconds: 30_000)
        )
        var previous: ObjectRef?
        for index in 0..<count {
            try store.save(SaveMetadata(author: author, processName: "coexist-test-helper")) { save in
                let task = try save.insert(
                    "Task",
                    ["title": .string("\(author) \(index)"), "createdAt": .date(Double(index))]
                )
                if let previous { try save.update(previous, ["notes": .string("followed by \(index)")]) }
                previous = task
            }
        }
        print("done \(count)")
    } catch {
        StandardStreams.error("coexist-test-helper: \(error)")
        exit(1)
    }
    exit(0)
}
do {
    let store = try LegacyStore(path: arguments[2], options: OpenOptions(busyTimeoutMilliseconds: 30_000))
    var previous: ObjectID?
    for index in 0..<count {
        try store.save(SaveMetadata(author: author, processName: "coexist-test-helper")) { save in
            let bytes = (0..<16).map { UInt8(truncatingIfNeeded: (index + Int(getpid()) * 7) >> ($0 % 4 * 8)) }
            let task = try save.insert(
                "Task",
                ["id": .uuid(bytes), "title": .string("\(author) \(index)"), "createdAt": .date(Double(index))]
            )
            if let previous { try save.update(previous, ["notes": .string("followed by \(index)")]) }
            previous = task
        }
    }
    print("done \(count)")
} catch {
    StandardStreams.error("coexist-test-helper: \(error)")
    exit(1)
}
