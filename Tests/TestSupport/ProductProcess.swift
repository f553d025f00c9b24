import Foundation

/// Runs one of the package's executables (`coexistctl`, `coexistd`) as a real process.
public struct ProductProcess: Sendable {
    /// What a finished process left behind.
    public struct Result: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    /// The folder holding the built products: the test binary's own folder.
    public static var productsDirectory: String {
        let executable =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var url = URL(fileURLWithPath: executable).deletingLastPathComponent()
        // The XCTest bundle on Linux is `<products>/<package>PackageTests.xctest`, a plain executable.
        if url.pathExtension == "xctest" { url = url.deletingLastPathComponent() }
        return url.path
    }

    /// Runs `product` with `arguments` in `directory`, waits, and returns status and output.
    public static func run(
        _ product: String,
        _ arguments: [String],
        directory: String? = nil,
        environment: [String: String]? = nil
    ) throws -> Result {
        try run(path: productsDirectory + "/" + product, arguments, directory: directory, environment: environment)
    }

    /// Runs the executable at `path` (a tool on `PATH` when `path` has no `/`), waits, and returns status
    /// and output.
    public static func run(
        path: String,
        _ arguments: [String],
        directory: String? = nil,
        environment: [String: String]? = nil
    ) throws -> Result {
        let process = Process()
        var executable = path
        if !path.contains("/") {
            let folders = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
            executable =
                folders.map { "\($0)/\(path)" }.first { FileManager.default.isExecutableFile(atPath: $0) } ?? path
        }
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        // Hermetic: a coexistd started without --config reads no /etc/coexist/coexistd.conf of this machine.
        var env = environment ?? ProcessInfo.processInfo.environment
        if env["COEXISTD_CONFIG"] == nil { env["COEXISTD_CONFIG"] = "" }
        // Logs to standard error, whatever service this test process runs under.
        if environment == nil {
            for name in ["INVOCATION_ID", "JOURNAL_STREAM", "SYSTEMD_EXEC_PID"] { env[name] = nil }
        }
        process.environment = SanitizerReport.carrying(env)
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Standard error is read on another thread meanwhile: a process filling one pipe while this one
        // waits on the other would never finish.
        let errors = PipeReader(err.fileHandleForReading)
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = errors.wait()
        process.waitUntilExit()
        SanitizerReport.forward(String(decoding: errData, as: UTF8.self), from: "\(executable) \(arguments)")
        return Result(
            status: process.terminationStatus,
            stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self)
        )
    }
}

/// Reads a pipe to its end on a thread of its own.
private final class PipeReader: @unchecked Sendable {
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }.start()
    }

    /// Everything the pipe held, once it is closed.
    func wait() -> Data {
        done.wait()
        return data
    }
}
