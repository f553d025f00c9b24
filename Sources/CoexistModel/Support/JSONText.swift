/// JSON text built by hand where a statement takes a JSON argument (`json_each(?)`).
public enum JSONText {
    /// `text` as a JSON string: quotes, backslashes and control characters escaped.
    public static func string(_ text: String) -> String {
        if !text.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            return "\"" + text + "\""
        }
        var output = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: output.unicodeScalars.append(scalar)
            }
        }
        return output + "\""
    }

    /// `values` as a JSON array of integers (`[1,-2,3]`), written digit by digit: a statement's list of keys
    /// for `json_each(?)`, made for every transaction the daemon reads.
    public static func integers(_ values: [Int64]) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(2 + values.count * 8)
        bytes.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            append(value, to: &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `value` as a JSON number to `output` (UTF-8), its digits written last first into a buffer of
    /// its own.
    public static func append(_ value: Int64, to output: inout [UInt8]) {
        if value < 0 { output.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        // 20 digits at most (UInt64.max).
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            output.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }

    /// `values` as a JSON array of strings, each escaped as ``string(_:)`` escapes it.
    public static func strings(_ values: [String]) -> String {
        "[" + values.map(string).joined(separator: ",") + "]"
    }

    /// The strings of `text` when it is a JSON array of strings written as ``strings(_:)`` writes one with
    /// nothing to escape (`["a","b"]`: no space, no backslash, no control character); nil for any other text,
    /// which a full JSON decoder reads (the common case of a list of property names, read without one).
    public static func plainStrings(_ text: String) -> [String]? {
        var text = text
        return text.withUTF8 { bytes -> [String]? in
            guard bytes.count >= 2, bytes[0] == UInt8(ascii: "["), bytes[bytes.count - 1] == UInt8(ascii: "]") else {
                return nil
            }
            var result: [String] = []
            var index = 1
            let end = bytes.count - 1
            if index == end { return result }
            while true {
                guard index < end, bytes[index] == UInt8(ascii: "\"") else { return nil }
                let start = index + 1
                var close = start
                while close < end, bytes[close] != UInt8(ascii: "\"") {
                    if bytes[close] == UInt8(ascii: "\\") || bytes[close] < 0x20 { return nil }
                    close += 1
                }
                guard close < end else { return nil }
                result.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<close]), as: UTF8.self))
                index = close + 1
                if index == end { return result }
                guard bytes[index] == UInt8(ascii: ",") else { return nil }
                index += 1
            }
        }
    }

    /// Appends `text` as a JSON string to `output` (UTF-8), escaped as ``string(_:)`` escapes it: its bytes
    /// are copied at once up to each one that needs escaping.
    public static func append(_ text: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            var start = 0
            for index in bytes.indices {
                let byte = bytes[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
                start = index + 1
                output.append(UInt8(ascii: "\\"))
                if byte >= 0x20 {
                    output.append(byte)
                } else {
                    output.append(UInt8(ascii: "u"))
                    output.append(UInt8(ascii: "0"))
                    output.append(UInt8(ascii: "0"))
                    output.append(hexDigit(byte >> 4))
                    output.append(hexDigit(byte & 0x0F))
                }
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...]))
        }
        output.append(UInt8(ascii: "\""))
    }

    /// The lower-case hexadecimal digit of `value` (0–15).
    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }
}
