import CoexistProtocol
import CoexistRuntime

#if canImport(Glibc)
import Glibc
#endif

/// The subscriber process of the fan-out scenario:
/// `coexist-bench subscribers SOCKET COUNT EXPECTED-EVENTS OUT READY-FILE SECONDS`.
///
/// Opens COUNT connections and subscribes each to Task events from "now"; creates READY-FILE once every one
/// is live; then reads until each has EXPECTED-EVENTS events, is closed, or SECONDS pass. Each connection
/// checks that its events arrive in token order, each transaction's events complete and in index order. OUT
/// gets a summary line "received R disordered D lagged L closed C", then "token receive-time-ns" for the
/// last event of every transaction on every connection (receive time: when `read` returned its bytes).
enum Subscribers {
    /// Where a connection's event stream is: the order check's state.
    private struct Order {
        var received = 0
        var token: Int64 = 0
        var nextIndex: Int64 = 0
        var count: Int64 = 0
        var disordered = 0
    }

    private final class Subscriber {
        let descriptor: Int32
        var pending: [UInt8] = []
        var order = Order()
        var received: Int { order.received }
        var disordered: Int { order.disordered }
        var lagged = false
        var closed = false

        init(descriptor: Int32) { self.descriptor = descriptor }
        deinit { close(descriptor) }
    }

    private static let subscribe = EventRequest("subscribe", since: .now, entities: ["Task"]).line

    static func run(
        socket: String,
        count: Int,
        expectedEvents: Int,
        output: String,
        ready: String,
        seconds: Int
    )
        throws
    {
        var subscribers: [Subscriber] = []
        var samples: [(token: Int64, time: Int64)] = []
        samples.reserveCapacity(count * max(1, expectedEvents / 50))
        for _ in 0..<count {
            let subscriber = Subscriber(descriptor: try LineClient.connect(path: socket))
            try writeAll(subscriber.descriptor, subscribe)
            try awaitLive(subscriber)
            _ = fcntl(subscriber.descriptor, F_SETFL, fcntl(subscriber.descriptor, F_GETFL) | O_NONBLOCK)
            subscribers.append(subscriber)
        }
        guard let marker = fopen(ready, "w") else { throw BenchError("cannot create \(ready)") }
        fclose(marker)

        let deadline = Measure.now() + Int64(seconds) * 1_000_000_000
        // An epoll set, as coexistd uses: with a thousand connections, `poll` would cost this reader more
        // than the events it reads.
        let readiness = try ReadinessSet()
        for (index, subscriber) in subscribers.enumerated() {
            try readiness.add(subscriber.descriptor, events: Int16(POLLIN), key: UInt64(index))
        }
        var waiting = [pollfd(fd: readiness.descriptor, events: Int16(POLLIN), revents: 0)]
        var buffer = [UInt8](repeating: 0, count: 1 << 18)
        var open = subscribers.count
        func finished(_ subscriber: Subscriber) -> Bool { subscriber.closed || subscriber.received >= expectedEvents }
        var unfinished = subscribers.filter { !finished($0) }.count
        while unfinished > 0, open > 0, Measure.now() < deadline {
            guard poll(&waiting, 1, 100) > 0 else { continue }
            for (key, _) in readiness.ready() {
                let subscriber = subscribers[Int(key)]
                let wasFinished = finished(subscriber)
                readAvailable(subscriber, &buffer, &samples)
                if subscriber.closed {
                    readiness.remove(subscriber.descriptor)
                    open -= 1
                }
                if !wasFinished && finished(subscriber) { unfinished -= 1 }
            }
        }
        var text = "received \(subscribers.reduce(0) { $0 + $1.received }) "
        text += "disordered \(subscribers.reduce(0) { $0 + $1.disordered }) "
        text += "lagged \(subscribers.filter(\.lagged).count) closed \(subscribers.filter(\.closed).count)\n"
        text.reserveCapacity(text.utf8.count + samples.count * 32)
        for sample in samples { text += "\(sample.token) \(sample.time)\n" }
        guard let file = fopen(output, "w") else { throw BenchError("cannot write \(output)") }
        defer { fclose(file) }
        fputs(text, file)
    }

    private static func writeAll(_ descriptor: Int32, _ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw SystemError(call: "write", code: errno) }
            offset += written
        }
    }

    /// Reads (blocking) until the subscription's `end_of_backlog`; keeps what follows it.
    private static func awaitLive(_ subscriber: Subscriber) throws {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            if let newline = subscriber.pending.firstIndex(of: 0x0A) {
                let line = subscriber.pending[..<newline]
                subscriber.pending.removeSubrange(...newline)
                if line.starts(with: Array(#"{"type":"end_of_backlog""#.utf8)) { return }
                if line.starts(with: Array(#"{"type":"error""#.utf8)) {
                    throw BenchError("coexistd refused a subscriber: \(String(decoding: line, as: UTF8.self))")
                }
                continue
            }
            let count = chunk.withUnsafeMutableBytes { read(subscriber.descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw BenchError("coexistd closed a subscriber before its backlog ended") }
            subscriber.pending += chunk[0..<count]
        }
    }

    /// Reads what the socket has and handles every complete line.
    private static func readAvailable(
        _ subscriber: Subscriber,
        _ buffer: inout [UInt8],
        _ samples: inout [(token: Int64, time: Int64)]
    ) {
        while true {
            let count = buffer.withUnsafeMutableBytes { read(subscriber.descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 {
                if errno != EAGAIN && errno != EWOULDBLOCK { subscriber.closed = true }
                return
            }
            if count == 0 {
                subscriber.closed = true
                return
            }
            let time = Measure.now()
            if subscriber.pending.isEmpty {
                let consumed = buffer.withUnsafeBufferPointer {
                    lines(UnsafeBufferPointer(rebasing: $0[..<count]), subscriber, time, &samples)
                }
                subscriber.pending += buffer[consumed..<count]
            } else {
                subscriber.pending += buffer[0..<count]
                let consumed = subscriber.pending.withUnsafeBufferPointer { lines($0, subscriber, time, &samples) }
                subscriber.pending.removeSubrange(0..<consumed)
            }
        }
    }

    private static let eventPrefix = Array(#"{"type":"event","token":"#.utf8)
    private static let laggedPrefix = Array(#"{"type":"lagged""#.utf8)

    /// Handles the complete lines in `bytes`; returns how many bytes they took.
    private static func lines(
        _ bytes: UnsafeBufferPointer<UInt8>,
        _ subscriber: Subscriber,
        _ time: Int64,
        _ samples: inout [(token: Int64, time: Int64)]
    ) -> Int {
        var start = 0
        var order = subscriber.order
        defer { subscriber.order = order }
        while start < bytes.count {
            guard let base = bytes.baseAddress,
                let found = memchr(base + start, 0x0A, bytes.count - start)
            else { break }
            let end = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
            let line = UnsafeBufferPointer(rebasing: bytes[start..<end])
            if line.starts(with: eventPrefix) {
                if event(line, &order) { samples.append((order.token, time)) }
            } else if line.starts(with: laggedPrefix) {
                subscriber.lagged = true
            }
            start = end + 1
        }
        return start
    }

    /// `{"type":"event","token":T,"index":I,"count":C,...}`: the server writes these fields first, in order.
    /// Checks the event's place in `order`; true when it ends its transaction.
    private static func event(_ line: UnsafeBufferPointer<UInt8>, _ order: inout Order) -> Bool {
        var position = eventPrefix.count
        var numbers: (Int64, Int64, Int64) = (0, 0, 0)
        for field in 0..<3 {
            var value: Int64 = 0
            while position < line.count, case let digit = line[position] &- 0x30, digit < 10 {
                value = value &* 10 &+ Int64(digit)
                position += 1
            }
            switch field {
            case 0: numbers.0 = value
            case 1: numbers.1 = value
            default: numbers.2 = value
            }
            // Skip `,"key":` up to the next digit.
            while position < line.count, line[position] &- 0x30 >= 10 { position += 1 }
        }
        let (token, index, count) = numbers
        // The same transaction's next event, or the first of a later one once the previous is complete.
        let inOrder =
            token == order.token
            ? index == order.nextIndex
            : token > order.token && index == 0 && order.nextIndex == order.count
        if !inOrder { order.disordered += 1 }
        order.token = token
        order.count = count
        order.nextIndex = index + 1
        order.received += 1
        return index == count - 1
    }
}
