import CoexistRuntime
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Both executables follow the README's one exit-code table, for every class of error.
@Suite struct ExitCodeTests {
    @Test(arguments: [
        (["coexistctl", "status", "--socket", "/nonexistent/c.sock"], 69),
        (["coexistctl", "wait", "1", "--socket", "/nonexistent/c.sock"], 69),
        (["coexistctl", "inspect", "/nonexistent/store.sqlite"], 66),
        (["coexistctl", "verify", "/nonexistent/store.sqlite"], 66),
        (["coexistd", "--database", "/nonexistent/store.sqlite", "--check-config"], 66),
        (["coexistd", "--database", "/nonexistent/store.sqlite"], 66),
        (["coexistd", "--frobnicate"], 64),
        (["coexistctl", "frobnicate"], 64),
    ])
    func exitCode(_ command: [String], _ expected: Int) throws {
        let result = try ProductProcess.run(command[0], Array(command.dropFirst()))
        #expect(Int(result.status) == expected, "\(command): \(result.stderr)")
        #expect(!result.stderr.isEmpty)
    }

    /// A daemon that closes the connection at once (stopping, say): coexistctl says it is unavailable (69),
    /// never dies of SIGPIPE (141).
    @Test func aConnectionClosedAtOnceIsUnavailable() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("closing.sock")
        let listener = try Self.listening(at: path) { peer in
            shutdown(peer, Int32(SHUT_RDWR))
            close(peer)
        }
        for command in [["status"], ["wait", "1"], ["tail", "--count", "1"]] {
            let result = try ProductProcess.run("coexistctl", command + ["--socket", path])
            #expect(result.status == 69, "\(command): \(result.status) \(result.stderr)")
        }
        withExtendedLifetime(listener) {}
    }

    /// A daemon that reads the subscription and then goes away without a word: `tail` says it is
    /// unavailable (69), not that all went well.
    @Test func tailWhoseDaemonGoesAwayIsUnavailable() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("going.sock")
        let listener = try Self.listening(at: path) { peer in
            // Read the request line, answer nothing, close cleanly.
            var byte: UInt8 = 0
            while read(peer, &byte, 1) == 1, byte != 0x0A {}
            close(peer)
        }
        let result = try ProductProcess.run("coexistctl", ["tail", "--socket", path])
        #expect(result.status == 69, "\(result.status) \(result.stderr)")
        #expect(result.stderr.contains("closed the connection"))
        withExtendedLifetime(listener) {}
    }

    /// A listener at `path` whose connections, for 10 s, `handle` takes (and closes), on a thread of its own.
    private static func listening(at path: String, _ handle: @escaping @Sendable (Int32) -> Void) throws -> UnixListener
    {
        let listener = try UnixListener(path: path, mode: 0o600)
        let descriptor = listener.descriptor
        Thread {
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline {
                let peer = accept(descriptor, nil, nil)
                if peer >= 0 { handle(peer) } else { usleep(1_000) }
            }
        }.start()
        return listener
    }

    /// A store the daemon's user cannot write: 77 (EX_NOPERM), naming the file; as root, run as nobody.
    @Test func readOnlyStore() throws {
        let directory = try TemporaryDirectory()
        let path = try SharedStore.create(in: directory).legacy.path
        chmod(directory.path, 0o755)
        for suffix in ["", "-wal", "-shm"] { chmod(path + suffix, 0o644) }
        // A copy of the binary beside the store: the build folder may not be reachable by nobody.
        let binary = directory.file("coexistd")
        try FileManager.default.copyItem(atPath: ProductProcess.productsDirectory + "/coexistd", toPath: binary)
        chmod(binary, 0o755)
        var command = [binary, "--database", path, "--check-config"]
        command += ["--socket", directory.file("c.sock")]
        let program: String
        if getuid() == 0 {
            program = "/usr/bin/setpriv"
            command = ["--reuid=65534", "--regid=65534", "--clear-groups"] + command
        } else {
            chmod(path, 0o444)
            program = command.removeFirst()
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = command
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 77, "\(text)")
        #expect(text.contains(path))
    }
}
