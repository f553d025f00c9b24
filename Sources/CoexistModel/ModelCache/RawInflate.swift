internal import CZlib

/// Raw DEFLATE decompression (no zlib header), as `Z_MODELCACHE` stores its archive (§2.3).
public enum RawInflate {
    /// Why inflating failed.
    public enum Failure: Error, Sendable, Equatable {
        /// The input is not a complete raw DEFLATE stream; the text is zlib's message.
        case corrupt(String)
        /// The output would exceed the limit: refused rather than exhausting memory.
        case tooLarge(limit: Int)
    }

    /// Inflates `input`, refusing output larger than `limit` bytes.
    public static func inflate(_ input: [UInt8], limit: Int = 256 << 20) throws(Failure) -> [UInt8] {
        // zlib keeps a pointer to its z_stream: it must not move between calls, so it lives on the heap.
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        defer {
            stream.deinitialize(count: 1)
            stream.deallocate()
        }
        guard input.count <= Int(UInt32.max) else { throw .tooLarge(limit: Int(UInt32.max)) }
        guard coexist_inflate_init_raw(stream) == Z_OK else { throw .corrupt("inflateInit2 failed") }
        defer { inflateEnd(stream) }
        let chunkSize = max(4096, min(input.count * 4, 1 << 20))
        let chunk = UnsafeMutablePointer<UInt8>.allocate(capacity: chunkSize)
        defer { chunk.deallocate() }
        let source = UnsafeMutablePointer<UInt8>.allocate(capacity: max(1, input.count))
        defer { source.deallocate() }
        source.initialize(from: input, count: input.count)
        stream.pointee.next_in = source
        stream.pointee.avail_in = UInt32(input.count)
        var output: [UInt8] = []
        while true {
            stream.pointee.next_out = chunk
            stream.pointee.avail_out = UInt32(chunkSize)
            let status = CZlib.inflate(stream, Z_NO_FLUSH)
            guard status == Z_OK || status == Z_STREAM_END else {
                throw .corrupt(stream.pointee.msg.map { String(cString: $0) } ?? "zlib status \(status)")
            }
            let produced = chunkSize - Int(stream.pointee.avail_out)
            guard output.count + produced <= limit else { throw .tooLarge(limit: limit) }
            output.append(contentsOf: UnsafeBufferPointer(start: chunk, count: produced))
            if status == Z_STREAM_END { return output }
            if produced == 0 && stream.pointee.avail_in == 0 {
                throw .corrupt("the stream ends before its final block")
            }
        }
    }
}
