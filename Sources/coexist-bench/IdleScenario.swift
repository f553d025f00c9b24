import CoexistProtocol
import CoexistRuntime

#if canImport(Glibc)
import Glibc
#endif

/// *idle*: the CPU time an idle coexistd uses per second (all threads, from `/proc`), with one subscriber
/// connected, over `seconds`.
enum IdleScenario {
    struct Result: Sendable {
        var seconds: Int
        var cpuNanosecondsPerSecond: Double
        var peakRSSKilobytes: Int64
    }

    static func run(modelPath: String, seconds: Int) throws -> Result {
        try BenchStore.withDaemon(modelPath: modelPath) { store, daemon in try measure(store, daemon, seconds) }
    }

    private static func measure(_ store: BenchStore, _ daemon: ChildProcess, _ seconds: Int) throws -> Result {
        let client = try LineClient(path: store.socket)
        try client.send(EventRequest("subscribe", since: .now).text)
        sleep(1)
        let startCPU = Measure.cpuTime(pid: daemon.pid)
        let start = Measure.now()
        sleep(UInt32(seconds))
        let used = Measure.cpuTime(pid: daemon.pid) - startCPU
        let elapsed = Double(Measure.now() - start) / 1e9
        return Result(
            seconds: seconds,
            cpuNanosecondsPerSecond: Double(used) / elapsed,
            peakRSSKilobytes: Measure.peakRSS(pid: daemon.pid)
        )
    }
}
