import CoexistRuntime
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Notifications never block the daemon on a service manager that does not read: `sd_notify(3)` blocked
/// on the twelfth unread datagram (the kernel's queue of ten, `net.unix.max_dgram_qlen`), which stopped
/// coexistd's event loop under a test whose listener read only at the end.
@Suite(.timeLimit(.minutes(1))) struct ServiceNotifierTests {
    @Test func aFullQueueDropsInsteadOfBlocking() throws {
        let directory = try TemporaryDirectory()
        let listener = try NotifyListener(path: directory.file("notify"))
        var sent = 0
        let started = Date()
        for index in 0..<50 where ServiceNotifier.send(Array("STATUS=\(index)".utf8), to: listener.path, patience: 0) {
            sent += 1
        }
        #expect(sent > 0 && sent < 50, "the queue took \(sent) of 50")
        #expect(Date().timeIntervalSince(started) < 30, "no send waited")
        // What was taken arrives whole and in order; the patient send gets in once there is room.
        #expect(listener.receive(timeout: 1) == "STATUS=0")
        #expect(ServiceNotifier.send(Array("READY=1".utf8), to: listener.path, patience: 1_000_000_000))
        var last: String?
        while let message = listener.receive(timeout: 0.5) { last = message }
        #expect(last == "READY=1")
    }

    @Test func anAbstractNameIsReached() throws {
        let name = "coexist-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        #expect(descriptor >= 0)
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = [UInt8(0)] + Array(name.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        #expect(bound == 0)
        #expect(ServiceNotifier.send(Array("WATCHDOG=1".utf8), to: "@" + name, patience: 0))
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        #expect(count == 10 && String(decoding: buffer.prefix(max(0, count)), as: UTF8.self) == "WATCHDOG=1")
    }
}
