import Testing

@testable import CoexistSQLite

/// The busy handler's sleeps between tries of a lock: 50 µs doubling, never above 1 ms (9/8 of it with the
/// jitter), never much past the timeout.
@Suite struct BusyHandlerTests {
    @Test func sleepsDoubleFrom50MicrosecondsUpToAMillisecond() {
        let state = BusyHandlerState(timeoutMilliseconds: 5_000)
        for _ in 0..<50 {
            let first = state.sleep(count: 0, waited: 0)
            #expect(first >= 43_750 && first <= 56_251, "\(first)")
            let fourth = state.sleep(count: 3, waited: 1_000_000)
            #expect(fourth >= 350_000 && fourth <= 450_001, "\(fourth)")
            for count in Int32(5)...40 {
                let sleep = state.sleep(count: count, waited: 2_000_000)
                #expect(sleep >= 875_000 && sleep <= 1_125_001, "try \(count): \(sleep) ns")
            }
        }
    }

    @Test func aSleepEndsNearTheTimeout() {
        let state = BusyHandlerState(timeoutMilliseconds: 5)
        for _ in 0..<50 {
            let sleep = state.sleep(count: 12, waited: 4_900_000)
            #expect(sleep <= 112_501, "\(sleep)")
            #expect(state.sleep(count: 12, waited: 5_000_000) <= 1)
            #expect(state.sleep(count: 12, waited: 9_000_000) <= 1)
            // However many tries: never a zero sleep (a spin) while time is left.
            #expect(state.sleep(count: 100, waited: 0) > 0)
        }
        #expect(BusyHandlerState(timeoutMilliseconds: 0).shouldRetry(count: 0) == false)
    }
}
