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
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        let microText = String(Int(micros))
        return pad(parts.tm_year + 1900, 4) + "-" + pad(parts.tm_mon + 1, 2) + "-" + pad(parts.tm_mday, 2) + "T"
            + pad(parts.tm_hour, 2) + ":" + pad(parts.tm_min, 2) + ":" + pad(parts.tm_sec, 2) + "."
            + String(repeating: "0", count: 6 - microText.count) + microText + "Z"
    }
}
