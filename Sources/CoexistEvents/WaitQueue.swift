import CoexistProtocol

/// The pending `wait` requests of every client, indexed twice so that adding one, answering those the
/// cursor reached and timing out those past their deadline each cost O(log n) per wait, however many are
/// pending (two binary heaps, entries removed lazily when their client goes).
struct WaitQueue {
    struct Wait {
        var client: Int32
        var token: Int64
        var deadline: UInt64
        /// The request's id, echoed in the reply.
        var id: EventRequest.RequestID?
    }

    private var entries: [Int: Wait] = [:]
    private var byClient: [Int32: Set<Int>] = [:]
    private var byToken = MinHeap<Key>()
    private var byDeadline = MinHeap<Key>()
    private var nextID = 0

    private struct Key: Comparable {
        var value: UInt64
        var id: Int
        static func < (lhs: Key, rhs: Key) -> Bool { (lhs.value, lhs.id) < (rhs.value, rhs.id) }
    }

    /// Waits pending.
    var count: Int { entries.count }
    var isEmpty: Bool { entries.isEmpty }

    /// Waits pending for `client`.
    func count(client: Int32) -> Int { byClient[client]?.count ?? 0 }

    /// The nearest deadline, nil when nothing waits.
    mutating func nearestDeadline() -> UInt64? {
        while let top = byDeadline.first, entries[top.id] == nil { byDeadline.removeFirst() }
        return byDeadline.first.map(\.value)
    }

    mutating func add(client: Int32, token: Int64, deadline: UInt64, requestID: EventRequest.RequestID? = nil) {
        let id = nextID
        nextID += 1
        entries[id] = Wait(client: client, token: token, deadline: deadline, id: requestID)
        byClient[client, default: []].insert(id)
        // Tokens are never negative (requests with one are refused), so the order is kept as unsigned.
        byToken.insert(Key(value: UInt64(max(0, token)), id: id))
        byDeadline.insert(Key(value: deadline, id: id))
    }

    /// Removes and returns the waits whose token is at most `cursor`, in token order.
    mutating func reached(_ cursor: Int64) -> [Wait] {
        guard cursor >= 0 else { return [] }
        var result: [Wait] = []
        while let top = byToken.first, top.value <= UInt64(cursor) {
            byToken.removeFirst()
            if let wait = take(top.id) { result.append(wait) }
        }
        compactIfSparse()
        return result
    }

    /// Removes and returns the waits whose deadline is at most `now`.
    mutating func expired(_ now: UInt64) -> [Wait] {
        var result: [Wait] = []
        while let top = byDeadline.first, top.value <= now {
            byDeadline.removeFirst()
            if let wait = take(top.id) { result.append(wait) }
        }
        compactIfSparse()
        return result
    }

    /// Forgets every wait of `client`.
    mutating func removeAll(client: Int32) {
        for id in byClient.removeValue(forKey: client) ?? [] { entries[id] = nil }
        compactIfSparse()
    }

    mutating func removeAll() { self = WaitQueue() }

    private mutating func take(_ id: Int) -> Wait? {
        guard let wait = entries.removeValue(forKey: id) else { return nil }
        byClient[wait.client]?.remove(id)
        if byClient[wait.client]?.isEmpty == true { byClient[wait.client] = nil }
        return wait
    }

    /// Rebuilds the heaps when most of their keys belong to waits already gone.
    private mutating func compactIfSparse() {
        guard byToken.count > 2 * entries.count + 1_024 || byDeadline.count > 2 * entries.count + 1_024 else { return }
        byToken = MinHeap(entries.map { Key(value: UInt64(max(0, $0.value.token)), id: $0.key) })
        byDeadline = MinHeap(entries.map { Key(value: $0.value.deadline, id: $0.key) })
    }
}

/// A binary min-heap.
struct MinHeap<Element: Comparable> {
    private var storage: [Element] = []

    init() {}

    init(_ elements: [Element]) {
        storage = elements
        for index in stride(from: storage.count / 2 - 1, through: 0, by: -1) { siftDown(index) }
    }

    var count: Int { storage.count }
    var first: Element? { storage.first }

    mutating func insert(_ element: Element) {
        storage.append(element)
        var child = storage.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard storage[child] < storage[parent] else { break }
            storage.swapAt(child, parent)
            child = parent
        }
    }

    mutating func removeFirst() {
        guard !storage.isEmpty else { return }
        storage.swapAt(0, storage.count - 1)
        storage.removeLast()
        siftDown(0)
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < storage.count else { return }
            var smallest = left
            if left + 1 < storage.count && storage[left + 1] < storage[left] { smallest = left + 1 }
            guard storage[smallest] < storage[parent] else { return }
            storage.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
