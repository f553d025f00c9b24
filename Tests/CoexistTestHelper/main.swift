import CoexistHistory
import CoexistLegacyStore
import CoexistRuntime
import CoexistSQLite
import CoexistStore

#if canImport(Glibc)
import Glibc
#endif

// A writer process for multi-process tests:
//   coexist-test-helper legacy-writer|new-writer STORE COUNT AUTHOR [PAUSE-MICROSECONDS]
//   coexist-test-helper legacy-random|new-random STORE COUNT AUTHOR SEED
//   coexist-test-helper legacy-sample|new-sample STORE COUNT AUTHOR SEED    (CoreDataPlus SampleModel)
//   coexist-test-helper legacy-edit STORE PK TITLE|-
// saves COUNT transactions to the demo-model store STORE (through the legacy store or the new store), each
// inserting one Task titled "AUTHOR i" and changing the previous one (pausing between saves when asked),
// then prints "done COUNT".
let arguments = CommandLine.arguments
if arguments.count == 6, ["legacy-sample", "new-sample"].contains(arguments[1]), let count = Int(arguments[3]),
    let seed = UInt64(arguments[5])
{
    do {
        let options = OpenOptions(busyTimeoutMilliseconds: 30_000)
        let legacy = try LegacyStore(path: arguments[2], options: options)
        guard let model = legacy.model, let car = model.entity(named: "Car") else {
            throw LegacyStoreError.modelMismatch(path: arguments[2], detail: "not a SampleModel store")
        }
        let entities = model.hierarchy(from: car).map(\.name)
        let tag = arguments[1] == "legacy-sample" ? "L" : "N"
        let result =
            arguments[1] == "legacy-sample"
            ? try SampleWriters.run(
                LegacySampleSide(store: legacy),
                entities: entities,
                count: count,
                author: arguments[4],
                tag: tag,
                seed: seed
            )
            : try SampleWriters.run(
                NewSampleSide(store: try NewStore(path: arguments[2], model: model, options: options)),
                entities: entities,
                count: count,
                author: arguments[4],
                tag: tag,
                seed: seed
            )
        print("saved \(result.saved) refused \(result.refused)")
        exit(0)
    } catch {
        StandardStreams.error("coexist-test-helper: \(error)")
        exit(1)
    }
}
if arguments.count == 6, ["legacy-random", "new-random"].contains(arguments[1]), let count = Int(arguments[3]),
    let seed = UInt64(arguments[5])
{
    do {
        let result =
            arguments[1] == "legacy-random"
            ? try RandomWriters.legacy(path: arguments[2], count: count, author: arguments[4], seed: seed)
            : try RandomWriters.new(path: arguments[2], count: count, author: arguments[4], seed: seed)
        print("saved \(result.saved) refused \(result.refused)")
        exit(0)
    } catch {
        StandardStreams.error("coexist-test-helper: \(error)")
        exit(1)
    }
}
// coexist-test-helper legacy-edit STORE PK TITLE|-    sets (or, with -, deletes) the Task with Z_PK PK.
if arguments.count == 5, arguments[1] == "legacy-edit", let pk = Int64(arguments[3]) {
    do {
        let store = try LegacyStore(path: arguments[2], options: OpenOptions(busyTimeoutMilliseconds: 30_000))
        let result = try store.save(SaveMetadata(author: "other-process", processName: "coexist-test-helper")) {
            save in
            let task = ObjectID(entity: "Task", pk: pk)
            if arguments[4] == "-" {
                try save.delete(task)
            } else {
                try save.update(task, ["title": .string(arguments[4])])
            }
        }
        print("token \(result.token ?? 0)")
        exit(0)
    } catch {
        StandardStreams.error("coexist-test-helper: \(error)")
        exit(1)
    }
}
guard arguments.count == 5 || arguments.count == 6, ["legacy-writer", "new-writer"].contains(arguments[1]),
    let count = Int(arguments[3]), let pause = UInt32(arguments.count == 6 ? arguments[5] : "0")
else {
    StandardStreams.error("usage: coexist-test-helper legacy-writer|new-writer STORE COUNT AUTHOR [PAUSE-MICROSECONDS]")
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
            if pause > 0 { usleep(pause) }
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
            // A random UUID, as an app makes: equal ids across writer runs would be parked by the bridge.
            let bytes = (0..<16).map { _ in UInt8.random(in: 0...255) }
            let task = try save.insert(
                "Task",
                ["id": .uuid(bytes), "title": .string("\(author) \(index)"), "createdAt": .date(Double(index))]
            )
            if let previous { try save.update(previous, ["notes": .string("followed by \(index)")]) }
            previous = task
        }
        if pause > 0 { usleep(pause) }
    }
    print("done \(count)")
} catch {
    StandardStreams.error("coexist-test-helper: \(error)")
    exit(1)
}
