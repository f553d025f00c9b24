import CoexistModel
import CoexistRuntime
import Glibc

/// A point in time given on the command line: ISO-8601 (`2025-01-01`, `2025-01-01T10:30:00Z`,
/// `2025-01-01T10:30:00.250+02:00`; no zone means UTC) or an age back from now (`90s`, `30m`, `2h`, `7d`,
/// `2w`). Parsed to seconds since 2001, the unit of `ATRANSACTION.ZTIMESTAMP`.
enum TimeArgument {
    /// Seconds since 2001 for `text`, or a usage error naming `option`.
    static func parse(_ text: String, option: String, now: Double) throws -> Double {
        if let age = try age(text, option: option) { return now - age }
        guard let unix = iso8601(text) else {
            throw ArgumentParser.UsageError(
                "--\(option) takes an ISO-8601 time (2025-01-01, 2025-01-01T10:30:00Z) or an age (90s, 30m, 2h, 7d, 2w), not \"\(text)\""
            )
        }
        return unix - ReferenceDate.unixOffset
    }

    /// Seconds in an age such as `30d`; nil when `text` is not an age.
    static func age(_ text: String, option: String) throws -> Double? {
        guard let unit = text.last, let seconds = units[unit] else { return nil }
        let digits = text.dropLast()
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber) else { return nil }
        guard let count = Int64(digits) else {
            throw ArgumentParser.UsageError("--\(option): \"\(text)\" is too large")
        }
        let (product, overflow) = count.multipliedReportingOverflow(by: seconds)
        // Ages beyond 10,000 years are refused rather than wrapped.
        guard !overflow, product <= 315_576_000_000 else {
            throw ArgumentParser.UsageError("--\(option): \"\(text)\" is too large")
        }
        return Double(product)
    }

    private static let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3_600, "d": 86_400, "w": 604_800]

    /// Unix seconds for an ISO-8601 date or date-time; nil when `text` is not one.
    static func iso8601(_ text: String) -> Double? {
        var scanner = Scanner(Array(text.utf8))
        guard let year = scanner.digits(4), scanner.take(UInt8(ascii: "-")), let month = scanner.digits(2),
            scanner.take(UInt8(ascii: "-")), let day = scanner.digits(2)
        else { return nil }
        var hour = 0
        var minute = 0
        var second = 0
        var fraction = 0.0
        var offset = 0
        if scanner.take(UInt8(ascii: "T")) || scanner.take(UInt8(ascii: " ")) {
            guard let h = scanner.digits(2), scanner.take(UInt8(ascii: ":")), let m = scanner.digits(2) else {
                return nil
            }
            (hour, minute) = (h, m)
            if scanner.take(UInt8(ascii: ":")) {
                guard let s = scanner.digits(2) else { return nil }
                second = s
                if scanner.take(UInt8(ascii: ".")) {
                    guard let (value, count) = scanner.fraction() else { return nil }
                    fraction = Double(value) / Double(power10(count))
                }
            }
            if scanner.take(UInt8(ascii: "Z")) {
                offset = 0
            } else if let sign = scanner.sign() {
                guard let h = scanner.digits(2) else { return nil }
                _ = scanner.take(UInt8(ascii: ":"))
                guard let m = scanner.digits(2), h <= 23, m <= 59 else { return nil }
                offset = sign * (h * 3_600 + m * 60)
            }
        }
        guard scanner.atEnd, (1...12).contains(month), (1...31).contains(day), hour <= 23, minute <= 59, second <= 60
        else { return nil }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        let seconds = timegm(&parts)
        // timegm normalises 2025-02-30 to March 2nd: such a date is refused instead.
        guard parts.tm_mday == Int32(day), parts.tm_mon == Int32(month - 1) else { return nil }
        return Double(seconds - offset) + fraction
    }

    private static func power10(_ count: Int) -> Int64 {
        (0..<count).reduce(Int64(1)) { product, _ in product * 10 }
    }

    /// Reads ASCII digits and signs from the front of a byte array.
    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { index == bytes.count }

        mutating func take(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        mutating func digits(_ count: Int) -> Int? {
            guard index + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[index..<index + count] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            index += count
            return value
        }

        /// Up to 9 fraction digits (more are refused): value and digit count.
        mutating func fraction() -> (Int64, Int)? {
            var value: Int64 = 0
            var count = 0
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                guard count < 9 else { return nil }
                value = value * 10 + Int64(bytes[index] - UInt8(ascii: "0"))
                count += 1
                index += 1
            }
            return count > 0 ? (value, count) : nil
        }

        mutating func sign() -> Int? {
            if take(UInt8(ascii: "+")) { return 1 }
            if take(UInt8(ascii: "-")) { return -1 }
            return nil
        }
    }
}
