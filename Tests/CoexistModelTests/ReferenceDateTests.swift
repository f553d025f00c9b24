import CoexistModel
import Testing

/// ISO-8601 text of Core Data's dates (seconds since 2001), microseconds always written.
@Suite struct ReferenceDateTests {
    @Test(arguments: [
        (0.0, "2001-01-01T00:00:00.000000Z"),
        (1.5, "2001-01-01T00:00:01.500000Z"),
        (786_297_600.123456, "2025-12-01T16:00:00.123456Z"),
        (-978_307_200.0, "1970-01-01T00:00:00.000000Z"),
        (0.9999996, "2001-01-01T00:00:01.000000Z"),
        (252_288_000_000.0, "9995-09-10T00:00:00.000000Z"),
    ])
    func iso8601(seconds: Double, text: String) {
        #expect(ReferenceDate.iso8601(secondsSince2001: seconds) == text)
    }

    @Test func outOfRangeIsTheNumber() {
        #expect(ReferenceDate.iso8601(secondsSince2001: 1e300) == String(1e300))
        #expect(ReferenceDate.iso8601(secondsSince2001: .nan) == String(Double.nan))
    }
}
