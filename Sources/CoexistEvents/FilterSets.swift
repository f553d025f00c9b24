import CoexistHistory

/// The filters of a subscription, as a key.
struct FilterSpec: Hashable {
    var entities: Set<String>?
    var sides: Set<Side>?
    var authors: Set<String>?
    var types: Set<ChangeType>?
    var mirrors: Bool

    /// The bytes its names hold (what ``EventServer/maximumFilterBytes`` bounds), 16 per name for the set.
    var bytes: Int {
        let names =
            (entities ?? []).reduce(0) { $0 + $1.utf8.count + 16 }
            + (authors ?? []).reduce(0) { $0 + $1.utf8.count + 16 }
        return 64 + names
    }
}

/// The filter sets in use, each numbered and shared by every subscription with the same filters, so that
/// whether a transaction passes a filter is decided once per filter, not per subscriber. A set lives as
/// long as a subscription uses it: the last one to end frees it and its number.
struct FilterSets {
    private var numbers: [FilterSpec: Int] = [:]
    private var specs: [Int: FilterSpec] = [:]
    private var users: [Int: Int] = [:]
    private var free: [Int] = []
    private var next = 0
    /// Bytes of the sets in use.
    private(set) var bytes = 0

    /// Sets in use.
    var count: Int { specs.count }

    /// The filters of set `number` (nil: not in use).
    func spec(_ number: Int) -> FilterSpec? { specs[number] }

    /// The number of `spec`'s set, counting one more user; nil when a new set would pass `maximumBytes`.
    mutating func acquire(_ spec: FilterSpec, maximumBytes: Int) -> Int? {
        if let number = numbers[spec] {
            users[number, default: 0] += 1
            return number
        }
        guard bytes + spec.bytes <= maximumBytes else { return nil }
        let number = free.popLast() ?? next
        if number == next { next += 1 }
        numbers[spec] = number
        specs[number] = spec
        users[number] = 1
        bytes += spec.bytes
        return number
    }

    /// One user fewer of set `number`; the last frees it.
    mutating func release(_ number: Int) {
        guard let count = users[number] else { return }
        guard count <= 1 else {
            users[number] = count - 1
            return
        }
        users[number] = nil
        if let spec = specs.removeValue(forKey: number) {
            numbers[spec] = nil
            bytes -= spec.bytes
        }
        free.append(number)
    }
}
