import CoexistRuntime
import Foundation
import Testing

/// An epoll set over a socket pair: a registration is reported with its key and what it is ready for,
/// again and again while it stays ready (level-triggered), never after it is removed; a hang-up is
/// reported whatever the registration waits for.
@Suite struct ReadinessSetTests {
    @Test func registrationsAreReportedWhileReadyAndNeverAfterRemoval() throws {
        let set = try ReadinessSet()
        var pair: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        defer { close(pair[1]) }
        try set.add(pair[0], events: Int16(POLLIN), key: 41)
        #expect(set.ready().isEmpty)
        #expect(!Self.readable(set.descriptor))

        _ = write(pair[1], "x", 1)
        #expect(Self.readable(set.descriptor))
        #expect(set.ready().map(\.key) == [41])
        #expect(set.ready().first?.events == Int16(POLLIN), "reported again: it is still readable")

        try set.modify(pair[0], events: Int16(POLLIN | POLLOUT), key: 42)
        let both = set.ready()
        #expect(both.map(\.key) == [42])
        #expect(both.first.map { $0.events & Int16(POLLIN | POLLOUT) } == Int16(POLLIN | POLLOUT))

        set.remove(pair[0])
        #expect(set.ready().isEmpty)
        #expect(!Self.readable(set.descriptor))

        // Registered for writing only, a peer's hang-up is still reported.
        try set.add(pair[0], events: Int16(POLLOUT), key: 43)
        _ = set.ready()
        try set.modify(pair[0], events: 0, key: 43)
        #expect(set.ready().isEmpty)
        close(pair[1])
        pair[1] = -1
        #expect(set.ready().first.map { $0.events & Int16(POLLHUP) } == Int16(POLLHUP))
        set.remove(pair[0])
        close(pair[0])
    }

    @Test func moreReadyRegistrationsThanOneBatchAreAllReported() throws {
        let set = try ReadinessSet()
        var pairs: [[Int32]] = []
        defer { for pair in pairs { close(pair[0]); close(pair[1]) } }
        for index in 0..<150 {
            var pair: [Int32] = [0, 0]
            #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
            pairs.append(pair)
            try set.add(pair[0], events: Int16(POLLIN), key: UInt64(index))
            _ = write(pair[1], "x", 1)
        }
        var seen = Set<UInt64>()
        for _ in 0..<10 {
            let batch = set.ready()
            #expect(batch.count <= 64)
            for (key, _) in batch {
                seen.insert(key)
                var byte: UInt8 = 0
                _ = read(pairs[Int(key)][0], &byte, 1)
            }
        }
        #expect(seen == Set(0..<150))
        #expect(set.ready().isEmpty)
    }

    private static func readable(_ descriptor: Int32) -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) == 1
    }
}
