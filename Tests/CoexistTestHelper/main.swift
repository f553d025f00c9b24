import CoexistHistory
import CoexistLegacyStore
import CoexistRuntime
import CoexistSQLite

#if canImport(Glibc)
import Glibc
#endif

// A writer process for multi-process tests:
//   coexist-test-helper legacy-writer STORE COUNT AUTHOR
// saves COUNT transactions to the demo-model store STORE, each inserting one Task titled "AUTHOR i" and
// renaming the previous one, then prints "done COUNT".
let arguments = CommandLine.arguments
guard arguments.count == 5, arguments[1] == "legacy-writer", let count = Int(arguments[3]) else {
    StandardStreams.error("usage: coexist-test-helper legacy-writer STORE COUNT AUTHOR")
    exit(64)
}
let author = arguments[4]
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
