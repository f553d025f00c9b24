import Foundation

/// Carries a sanitizer's report from a process a test started to the test process's own standard error.
///
/// Under `--sanitize=thread` the products a test starts are instrumented too, but their reports go to their
/// own standard error (a pipe, a log file in a temporary folder), and ThreadSanitizer's exit status (66) is
/// only seen where a test checks it. Copied here, a report reaches the test log CI searches.
public enum SanitizerReport {
    /// `environment` with this process's `TSAN_OPTIONS` added when it names none: a process started with an
    /// environment of its own still writes its reports where CI reads them (`log_path`).
    public static func carrying(_ environment: [String: String]) -> [String: String] {
        var environment = environment
        if environment["TSAN_OPTIONS"] == nil {
            environment["TSAN_OPTIONS"] = ProcessInfo.processInfo.environment["TSAN_OPTIONS"]
        }
        return environment
    }

    /// Writes `output` to standard error, headed by `source`, when it holds a ThreadSanitizer report.
    public static func forward(_ output: String, from source: String) {
        guard output.contains("ThreadSanitizer") else { return }
        FileHandle.standardError.write(Data("== \(source) reported:\n\(output)\n".utf8))
    }
}
