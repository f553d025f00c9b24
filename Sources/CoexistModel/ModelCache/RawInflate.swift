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
        var stream = z_stream()
        guard coexist_inflate_init_raw(&stream) == Z_OK else { throw .corrupt("inflateInit2 failed") }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: max(4096, min(input.count * 4, 1 << 20)))
        var status: Int32 = Z_OK
        var source = input
        let result: Failure? = source.withUnsafeMutableBufferPointer { inputBuffer in
            stream.next_in = inputBuffer.baseAddress
            stream.avail_in = UInt32(inputBuffer.count)
            repeat {
                let produced: Int = chunk.withUnsafeMutableBufferPointer { out in
                    stream.next_out = out.baseAddress
                    stream.avail_out = UInt32(out.count)
                    status = CZlib.inflate(&stream, Z_NO_FLUSH)
                    return out.count - Int(stream.avail_out)
                }
                if status != Z_OK && status != Z_STREAM_END {
                    let message = stream.msg.map { String(cString: $0) } ?? "zlib status \(status)"
                    return .corrupt(message)
                }
                if output.count + produced > limit { return .tooLarge(limit: limit) }
                output.append(contentsOf: chunk[0..<produced])
                if status == Z_OK && produced == 0 && stream.avail_in == 0 {
                    return .corrupt("the stream ends before its final block")
                }
            } while status != Z_STREAM_END
            return nil
        }
        if let result { throw result }
        return output
    }
}
