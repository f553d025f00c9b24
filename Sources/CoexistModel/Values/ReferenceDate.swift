#if canImport(Glibc)
internal import Glibc
#endif

/// Core Data's time base: seconds since 2001-01-01 00:00:00 UTC (the `NSDate` reference date).
public enum ReferenceDate {
    /// Seconds from the Unix epoch to the reference date.
    public static let unixOffset: Double = 978_307_200

    /// ISO-8601 UTC text with microseconds (`2024-07-29T01:22:12.380000Z`) for seconds since 2001.
    ///
    /// Non-finite values and years outside 0001…9999 come back as the plain number.
    public static func iso8601(secondsSince2001 seconds: Double) -> String {
        let unix = seconds + unixOffset
        guard unix.isFinite, unix > -62_135_596_800, unix < 253_402_300_800 else { return String(seconds) }
        var whole = unix.rounded(.down)
        var micros = ((unix - whole) * 1_000_000).rounded()
        if micros >= 1_000_000 {
            whole += 1
            micros -= 1_000_000
        }
        var time = time_t(whole)
        var parts = tm()
        gmtime_r(&time, &parts)
        // Digits written in place: this runs for every event and every snapshot row's dates.
        var text = Array("0000-00-00T00:00:00.000000Z".utf8)
        func put(_ value: Int, at offset: Int, width: Int) {
            var rest = value
            for index in stride(from: offset + width - 1, through: offset, by: -1) {
                text[index] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            }
        }
        put(Int(parts.tm_year) + 1900, at: 0, width: 4)
        put(Int(parts.tm_mon) + 1, at: 5, width: 2)
        put(Int(parts.tm_mday), at: 8, width: 2)
        put(Int(parts.tm_hour), at: 11, width: 2)
        put(Int(parts.tm_min), at: 14, width: 2)
        put(Int(parts.tm_sec), at: 17, width: 2)
        put(Int(micros), at: 20, width: 6)
        return String(decoding: text, as: UTF8.self)
    }
}
