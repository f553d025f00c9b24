import CoexistConfiguration
import CoexistEvents
import CoexistModel
import CoexistProtocol

/// The inputs coexist takes from outside: a socket request line, a sequence of requests over one connection,
/// a configuration file, a model's XML, a store's `Z_MODELCACHE`.
enum FuzzTarget: String, CaseIterable {
    case events
    case sequence
    case config
    case model
    case modelcache

    static let usage = "usage: coexist-fuzz events|sequence|config|model|modelcache [OPTIONS] [CORPUS...]"

    /// The sequence target's server, made on first use.
    nonisolated(unsafe) static var harness: SequenceHarness?

    /// libFuzzer's callback for the target: decode, and ignore the (expected) errors.
    var callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32 {
        switch self {
        case .events:
            { data, size in
                _ = EventRequest.decode(FuzzTarget.bytes(data, size))
                return 0
            }
        case .sequence:
            { data, size in
                let harness = FuzzTarget.harness ?? SequenceHarness.make()
                FuzzTarget.harness = harness
                harness.run(FuzzTarget.bytes(data, size))
                return 0
            }
        case .modelcache:
            { data, size in
                // The first byte chooses the layer: even, the stored form (raw DEFLATE, inflated within a
                // small bound so that a bomb costs little); odd, the keyed archive itself.
                let bytes = FuzzTarget.bytes(data, size)
                guard let first = bytes.first else { return 0 }
                let decoder = ModelCacheDecoder(source: "fuzz")
                if first % 2 == 0 {
                    if let archive = try? RawInflate.inflate(Array(bytes.dropFirst()), limit: 4 << 20) {
                        _ = try? decoder.decode(archive: archive)
                    }
                } else {
                    _ = try? decoder.decode(archive: Array(bytes.dropFirst()))
                }
                return 0
            }
        case .config:
            { data, size in
                let bytes = FuzzTarget.bytes(data, size)
                if let text = String(validating: bytes, as: UTF8.self) {
                    _ = try? DaemonConfiguration.parse(text, file: "fuzz.conf")
                }
                return 0
            }
        case .model:
            { data, size in
                _ = try? XCDataModelReader.decodeContents(FuzzTarget.bytes(data, size), file: "fuzz/contents")
                return 0
            }
        }
    }

    static func bytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
        guard let data, size > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: size))
    }
}
