#if canImport(Glibc)
import Glibc
#endif

/// One encoded wire line (newline included) in memory that never moves, shared by every client it is
/// queued for: an event is encoded and copied once, however many subscribers receive it, and client queues
/// hand its bytes straight to `writev`.
public final class WireLine: @unchecked Sendable {
    /// The bytes; immutable after creation.
    let bytes: UnsafeMutableRawBufferPointer
    /// The token of the event it carries; nil for other messages.
    let token: Int64?

    /// A line holding a copy of `source`.
    init(_ source: [UInt8], token: Int64? = nil) {
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, source.count), alignment: 1)
        source.withUnsafeBytes { storage.copyMemory(from: $0) }
        bytes = storage
        count = source.count
        self.token = token
    }

    /// The number of bytes.
    let count: Int

    deinit { bytes.deallocate() }

    /// The bytes as an array (for tests and tools).
    public var array: [UInt8] { Array(bytes.prefix(count)) }
}
