import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import CoexistStore

/// A reproducible generator for the writers.
struct Random {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(max(1, bound))) }
}

/// Random mixes of inserts, updates, deletes, relationship changes and cascades on the demo model, one save
/// per step. A save that fails because the other writer deleted its object is counted, not fatal.
enum RandomWriters {
    static func legacy(path: String, count: Int, author: String, seed: UInt64) throws -> (saved: Int, refused: Int) {
        let store = try LegacyStore(path: path, options: OpenOptions(busyTimeoutMilliseconds: 30_000))
        var random = Random(state: seed)
        var saved = 0
        var refused = 0
        for step in 0..<count {
            let tasks = try store.objects(of: "Task").map(\.id)
            let categories = try store.objects(of: "Category").map(\.id)
            do {
                try store.save(SaveMetadata(author: author, processName: "random-writer")) { save in
                    switch random.below(20) {
                    case 0..<2:
                        try save.insert(
                            "Category",
                            ["id": uuid(&random), "name": .string("\(author) category \(step)")]
                        )
                    case 2..<9:
                        let task = try save.insert(
                            "Task",
                            [
                                "id": uuid(&random), "title": .string("\(author) task \(step)"),
                                "createdAt": .date(Double(step)),
                            ]
                        )
                        if let category = pick(categories, &random) { try save.setToOne(task, "category", category) }
                    case 9..<14:
                        if let task = pick(tasks, &random) {
                            try save.update(
                                task,
                                [
                                    "title": .string("\(author) edit \(step)"),
                                    "priority": .integer(Int64(random.below(5))),
                                    "isCompleted": .boolean(random.below(2) == 0),
                                ]
                            )
                        }
                    case 14..<17:
                        if let task = pick(tasks, &random) {
                            try save.setToOne(task, "category", pick(categories, &random))
                        }
                    case 17..<19:
                        if let task = pick(tasks, &random) { try save.delete(task) }
                    default:
                        if let category = pick(categories, &random) { try save.delete(category) }  // cascades
                    }
                }
                saved += 1
            } catch {
                refused += 1
            }
        }
        return (saved, refused)
    }

    static func new(path: String, count: Int, author: String, seed: UInt64) throws -> (saved: Int, refused: Int) {
        guard let model = try LegacyStore(path: path).model else {
            throw LegacyStoreError.modelMismatch(path: path, detail: "no model")
        }
        let store = try NewStore(path: path, model: model, options: OpenOptions(busyTimeoutMilliseconds: 30_000))
        var random = Random(state: seed)
        var saved = 0
        var refused = 0
        for step in 0..<count {
            let tasks = try store.refs(of: "Task")
            let categories = try store.refs(of: "Category")
            do {
                try store.save(SaveMetadata(author: author, processName: "random-writer")) { save in
                    switch random.below(20) {
                    case 0..<2:
                        try save.insert("Category", ["name": .string("\(author) category \(step)")])
                    case 2..<9:
                        let task = try save.insert(
                            "Task",
                            ["title": .string("\(author) task \(step)"), "createdAt": .date(Double(step))]
                        )
                        if let category = pick(categories, &random) { try save.setToOne(task, "category", category) }
                    case 9..<14:
                        if let task = pick(tasks, &random) {
                            try save.update(
                                task,
                                [
                                    "title": .string("\(author) edit \(step)"),
                                    "priority": .integer(Int64(random.below(5))),
                                    "notes": .string("n\(step)"),
                                ]
                            )
                        }
                    case 14..<17:
                        if let task = pick(tasks, &random) {
                            try save.setToOne(task, "category", pick(categories, &random))
                        }
                    case 17..<19:
                        if let task = pick(tasks, &random) { try save.delete(task) }
                    default:
                        if let category = pick(categories, &random) { try save.delete(category) }
                    }
                }
                saved += 1
            } catch {
                refused += 1
            }
        }
        return (saved, refused)
    }

    static func pick<T>(_ items: [T], _ random: inout Random) -> T? {
        items.isEmpty ? nil : items[random.below(items.count)]
    }

    static func uuid(_ random: inout Random) -> AttributeValue {
        var bytes = (0..<16).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        return .uuid(bytes)
    }
}
