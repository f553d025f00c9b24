#if canImport(Glibc)
import Glibc
#endif

/// Time and statistics for the scenarios.
enum Measure {
    /// CLOCK_MONOTONIC in nanoseconds: one clock for every process on the machine, so a writer's commit time
    /// and a subscriber's receive time can be subtracted.
    static func now() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }

    /// Sleeps until the monotonic clock reaches `deadline` (ns).
    static func sleep(until deadline: Int64) {
        while true {
            let remaining = deadline - now()
            if remaining <= 0 { return }
            var spec = timespec(tv_sec: Int(remaining / 1_000_000_000), tv_nsec: Int(remaining % 1_000_000_000))
            nanosleep(&spec, nil)
        }
    }

    /// p50/p90/p99/max of samples in nanoseconds.
    struct Distribution: Sendable {
        var count: Int
        var p50: Int64
        var p90: Int64
        var p99: Int64
        var max: Int64

        init(_ samples: [Int64]) {
            let sorted = samples.sorted()
            count = sorted.count
            func at(_ fraction: Double) -> Int64 {
                sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
            }
            p50 = at(0.50)
            p90 = at(0.90)
            p99 = at(0.99)
            max = sorted.last ?? 0
        }
    }

    /// The median of `samples` (0 when empty).
    static func median(_ samples: [Int64]) -> Int64 { Distribution(samples).p50 }

    /// coexistd's threads that mirror (the bridge and its checkpoints), left out of the event service's CPU.
    static let bridgeThreads = ["coexist-bridge", "coexist-ckpt"]

    /// Total CPU time (ns, kernel included) the process `pid` has used, summed over its threads
    /// (`/proc/PID/task/*/schedstat`), leaving out the threads whose names start with one of `excluding`
    /// (`/proc/PID/task/*/comm`).
    static func cpuTime(pid: Int32, excluding: [String] = []) -> Int64 {
        guard let directory = opendir("/proc/\(pid)/task") else { return 0 }
        defer { closedir(directory) }
        var total: Int64 = 0
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name.first?.isNumber == true, let text = readFile("/proc/\(pid)/task/\(name)/schedstat") else {
                continue
            }
            if !excluding.isEmpty, let comm = readFile("/proc/\(pid)/task/\(name)/comm"),
                excluding.contains(where: comm.hasPrefix)
            {
                continue
            }
            total += Int64(text.split(separator: " ").first ?? "") ?? 0
        }
        return total
    }

    /// Peak resident set size (kB) of `pid` (`VmHWM` in `/proc/PID/status`).
    static func peakRSS(pid: Int32) -> Int64 {
        guard let text = readFile("/proc/\(pid)/status") else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            return Int64(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
        }
        return 0
    }

    static func readFile(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count <= 0 { break }
            bytes += buffer[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
