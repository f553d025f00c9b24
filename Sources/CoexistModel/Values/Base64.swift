/// Standard base64 (RFC 4648, with padding), without Foundation.
public enum Base64 {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// The base64 text of `bytes`.
    public static func encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let count = min(3, bytes.count - index)
            var value = 0
            for offset in 0..<3 { value = value << 8 | (offset < count ? Int(bytes[index + offset]) : 0) }
            for position in 0..<4 {
                output.append(position <= count ? alphabet[(value >> (18 - 6 * position)) & 0x3F] : UInt8(ascii: "="))
            }
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The bytes of base64 `text`, or nil when it is not valid padded base64.
    public static func decode(_ text: String) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard characters.count % 4 == 0 else { return nil }
        var lookup = [Int](repeating: -1, count: 256)
        for (index, character) in alphabet.enumerated() { lookup[Int(character)] = index }
        var output: [UInt8] = []
        output.reserveCapacity(characters.count / 4 * 3)
        var index = 0
        while index < characters.count {
            var value = 0
            var padding = 0
            for offset in 0..<4 {
                let character = characters[index + offset]
                if character == UInt8(ascii: "=") {
                    guard index + 4 == characters.count, offset >= 2 else { return nil }
                    padding += 1
                    value <<= 6
                } else {
                    guard padding == 0, lookup[Int(character)] >= 0 else { return nil }
                    value = value << 6 | lookup[Int(character)]
                }
            }
            output.append(UInt8((value >> 16) & 0xFF))
            if padding < 2 { output.append(UInt8((value >> 8) & 0xFF)) }
            if padding < 1 { output.append(UInt8(value & 0xFF)) }
            index += 4
        }
        return output
    }
}
