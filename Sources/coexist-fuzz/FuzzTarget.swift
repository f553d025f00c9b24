import CoexistDaemon
import CoexistEvents
import CoexistModel

/// The inputs coexist takes from outside: a socket request line, a configuration file, a model's XML.
enum FuzzTarget: String, CaseIterable {
    case events
    case config
    case model

    static let usage = "usage: coexist-fuzz events|config|model [OPTIONS] [CORPUS...]"

    /// libFuzzer's callback for the target: decode, and ignore the (expected) errors.
    var callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32 {
        switch self {
        case .events:
            { data, size in
                _ = EventRequest.decode(FuzzTarget.bytes(data, size))
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
