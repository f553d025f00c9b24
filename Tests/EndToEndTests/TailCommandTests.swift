import CoexistHistory
import Foundation
import TestSupport
import Testing

/// `coexistctl tail` when coexistd goes away: 69 without --follow; with it, it reconnects to the next
/// coexistd on the socket and goes on after the last change it printed, none twice, none lost.
@Suite struct TailCommandTests {
    @Test func tailEndsWhenTheDaemonStopsAndFollowsWithFollow() throws {
        let directory = try TemporaryDirectory()
        let shared = try SharedStore.create(in: directory)
        func insert(_ title: String) throws -> Int64 {
            try shared.legacy.save(SaveMetadata(author: "old-app")) { save in
                var values = DemoStore.mandatoryValues(for: "Task", in: shared.legacy)
                values["id"] = .uuid((0..<16).map { _ in UInt8.random(in: 0...255) })
                values["title"] = .string(title)
                _ = try save.insert("Task", values)
            }.token ?? 0
        }
        let first = try insert("before")
        var daemon = try DaemonProcess(database: shared.legacy.path, directory: directory)
        try daemon.waitUntilServing()

        // Without --follow: coexistd's stop ends tail with 69, said on stderr.
        let plain = try Self.start(["tail", "--since", "0", "--socket", daemon.socket])
        let following = try Self.start(["tail", "--since", "0", "--follow", "--json", "--socket", daemon.socket])
        // Both have printed the first change (so both are connected) before coexistd stops.
        let connected = Date().addingTimeInterval(60)
        while Date() < connected,
            !(plain.stdoutLines().contains { $0.contains("Z_PK") }
                && following.stdoutLines().contains { $0.contains("\"token\":\(first)") })
        {
            usleep(50_000)
        }
        #expect(daemon.stop() == 0)
        #expect(plain.wait(seconds: 60) == 69)
        #expect(plain.stderr().contains("coexistd stopped"), "\(plain.stderr())")

        // A new coexistd on the same socket: --follow goes on with what is committed meanwhile and after.
        let meanwhile = try insert("meanwhile")
        daemon = try DaemonProcess(database: shared.legacy.path, directory: directory)
        try daemon.waitUntilServing()
        let after = try insert("after")
        let deadline = Date().addingTimeInterval(30)
        var tokens: [Int64] = []
        while Date() < deadline {
            tokens = following.stdoutLines().compactMap { line in
                guard let message = ServerMessageLine(line), message.type == "event" else { return nil }
                return message.token
            }
            if tokens.contains(after) { break }
            usleep(100_000)
        }
        // SIGKILL: the test process may run with SIGTERM blocked (a signalfd test), which its children inherit.
        kill(following.process.processIdentifier, SIGKILL)
        _ = following.wait(seconds: 60)
        let own = tokens.filter { [first, meanwhile, after].contains($0) }
        #expect(own == [first, meanwhile, after], "every change once, in order: \(tokens)")
        #expect(following.stderr().contains("reconnecting"), "\(following.stderr())")
        #expect(daemon.stop() == 0)
    }

    /// A durable consumer that stops in the middle of a transaction has not acknowledged it: the next run
    /// gets the whole transaction again, never only what follows (acknowledging each event lost the rest).
    @Test func aDurableTailAcknowledgesWholeTransactionsOnly() throws {
        let directory = try TemporaryDirectory()
        let shared = try SharedStore.create(in: directory)
        let daemon = try DaemonProcess(database: shared.legacy.path, directory: directory)
        try daemon.waitUntilServing()
        // One transaction of three changes.
        let token =
            try shared.legacy.save(SaveMetadata(author: "old-app")) { save in
                for index in 0..<3 {
                    var values = DemoStore.mandatoryValues(for: "Task", in: shared.legacy)
                    values["id"] = .uuid((0..<16).map { _ in UInt8.random(in: 0...255) })
                    values["title"] = .string("task \(index)")
                    _ = try save.insert("Task", values)
                }
            }.token ?? 0
        // A new consumer starts where --since says; a known one after what it acknowledged.
        func tail(_ count: Int, since: Int64? = nil) throws -> [Int64] {
            let result = try ProductProcess.run(
                path: "/usr/bin/timeout",
                [
                    "-s", "KILL", "20", ProductProcess.productsDirectory + "/coexistctl", "tail", "--name", "indexer",
                    "--count",
                    String(count), "--json", "--socket", daemon.socket,
                ] + (since.map { ["--since", String($0)] } ?? [])
            )
            #expect(result.status == 0, "\(result.status): \(result.stderr)")
            return result.stdout.split(separator: "\n").compactMap { line in
                guard let message = ServerMessageLine(String(line)), message.type == "event" else { return nil }
                return message.token
            }
        }
        #expect(try tail(2, since: token - 1) == [token, token], "two of the transaction's three changes")
        #expect(try tail(3) == [token, token, token], "the whole transaction again, not one change")
        #expect(daemon.stop() == 0)
    }

    /// A coexistctl running in the background, its output in files.
    struct Running {
        let directory: TemporaryDirectory
        let process: Process
        let out: String
        let err: String
        func stdoutLines() -> [String] {
            String(decoding: FileManager.default.contents(atPath: out) ?? Data(), as: UTF8.self)
                .split(separator: "\n").map(String.init)
        }
        /// Waits up to `seconds` for the process to end (then kills it); returns its status.
        func wait(seconds: Double) -> Int32 {
            let deadline = Date().addingTimeInterval(seconds)
            while process.isRunning && Date() < deadline { usleep(20_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            return process.terminationStatus
        }

        func stderr() -> String {
            String(decoding: FileManager.default.contents(atPath: err) ?? Data(), as: UTF8.self)
        }
    }

    static func start(_ arguments: [String]) throws -> Running {
        let directory = try TemporaryDirectory()
        let out = directory.file("out")
        let err = directory.file("err")
        guard FileManager.default.createFile(atPath: out, contents: nil),
            FileManager.default.createFile(atPath: err, contents: nil)
        else { throw CocoaError(.fileWriteUnknown) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ProductProcess.productsDirectory + "/coexistctl")
        process.arguments = arguments
        process.standardOutput = FileHandle(forWritingAtPath: out)
        process.standardError = FileHandle(forWritingAtPath: err)
        try process.run()
        return Running(directory: directory, process: process, out: out, err: err)
    }
}

/// The type and token of a protocol line, read with JSONSerialization.
struct ServerMessageLine {
    let type: String
    let token: Int64?
    init?(_ line: String) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let type = object["type"] as? String
        else { return nil }
        self.type = type
        token = (object["token"] as? NSNumber)?.int64Value
    }
}
