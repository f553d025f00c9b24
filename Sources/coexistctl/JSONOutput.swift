import FoundationEssentials

/// JSON text for `--json` outputs: sorted keys, so output is stable and diffable.
enum JSONOutput {
    static func encode(_ value: some Encodable, pretty: Bool = true) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting =
            pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
