import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A stand-in for systemd's notification socket: an AF_UNIX datagram socket a daemon sends READY=1 & co. to.
public final class NotifyListener {
    public let path: String
    let descriptor: Int32

    /// Binds the socket at `path`.
    public init(path: String) throws {
        self.path = path
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.prefix(107).enumerated() { raw[index] = byte }
        }
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else { throw CocoaError(.fileWriteUnknown) }
    }

    deinit { close(descriptor) }

    /// The next datagram within `timeout` seconds.
    public func receive(timeout: Double) -> String? {
        var descriptors = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
        guard poll(&descriptors, 1, Int32(timeout * 1000)) > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        return count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : nil
    }

    /// Waits for a datagram containing `text`; returns it.
    public func wait(for text: String, timeout: Double) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let message = receive(timeout: 0.1), message.contains(text) { return message }
        }
        return nil
    }
}
