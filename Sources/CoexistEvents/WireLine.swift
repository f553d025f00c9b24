import CoexistModel
import CoexistProtocol

#if canImport(Glibc)
import Glibc
#endif

/// One or more encoded wire lines (newlines included) in memory that never moves, shared by every client they
/// are queued for: an event is encoded and copied once, however many subscribers receive it, and client
/// queues hand its bytes straight to `sendmsg`. A transaction's events are also joined into one batch, so that
/// a subscriber taking all of them costs one queue entry and one `iovec`, not one per event.
public final class WireLine: @unchecked Sendable {
    /// The bytes; immutable after creation.
    let bytes: UnsafeMutableRawBufferPointer
    /// The number of bytes.
    let count: Int
    /// The token of the events it carries; nil for other messages.
    let token: Int64?
    /// How many events it carries (0 for other messages).
    let events: Int

    /// A line holding a copy of `source`: `events` events (one by default) when `token` is given, else
    /// another message.
    init(_ source: [UInt8], token: Int64? = nil, events: Int = 1) {
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, source.count), alignment: 1)
        source.withUnsafeBytes { storage.copyMemory(from: $0) }
        bytes = storage
        count = source.count
        self.token = token
        self.events = token == nil ? 0 : events
    }

    /// The events of one transaction as one message (`"framing":"transaction"`): the transaction's token,
    /// time, author, side and mirror flag, how many changes it carries, and the changes — each the event
    /// object the default framing sends, in order, with its values when `values`. Nil without events.
    public convenience init?(transaction events: [EncodedEvent], values: Bool) {
        guard let first = events.first else { return nil }
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("type")
        writer.string("transaction")
        writer.key("token")
        writer.integer(first.token)
        writer.key("timestamp")
        writer.string(ReferenceDate.iso8601(secondsSince2001: first.timestamp))
        writer.key("author")
        writer.string(first.author)
        writer.key("side")
        writer.string(first.side.rawValue)
        writer.key("mirror")
        writer.bool(first.isMirror)
        writer.key("count")
        writer.integer(Int64(events.count))
        writer.key("changes")
        writer.beginArray()
        var bytes = writer.bytes
        for (index, event) in events.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            let line = values ? (event.withValues ?? event.plain) : event.plain
            // Each event line without its newline.
            bytes += line.bytes.prefix(max(0, line.count - 1))
        }
        bytes += Array("]}\n".utf8)
        self.init(bytes, token: first.token, events: events.count)
    }

    /// The events of one transaction (`token`), joined in order.
    init(joining lines: [WireLine], token: Int64) {
        let total = lines.reduce(0) { $0 + $1.count }
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, total), alignment: 1)
        var offset = 0
        for line in lines {
            UnsafeMutableRawBufferPointer(rebasing: storage[offset..<offset + line.count])
                .copyMemory(from: UnsafeRawBufferPointer(rebasing: line.bytes[0..<line.count]))
            offset += line.count
        }
        bytes = storage
        count = total
        self.token = token
        events = lines.reduce(0) { $0 + $1.events }
    }

    deinit { bytes.deallocate() }

    /// The bytes as an array (for tests and tools).
    public var array: [UInt8] { Array(bytes.prefix(count)) }

    /// The bytes without the final newline, as an array: a message's payload, copied once.
    public var payload: [UInt8] {
        Array(bytes.prefix(count > 0 && bytes[count - 1] == UInt8(ascii: "\n") ? count - 1 : count))
    }
}
