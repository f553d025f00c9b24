import CoexistHistory
import CoexistLegacyStore
import CoexistSQLite
import Foundation
import TestSupport
import Testing

@Suite(.serialized) struct DaemonTests {
    /// Waits until the daemon reports no lag.
    func waitForCatchUp(_ client: SocketClient, timeout: Double = 60) throws -> [String: Any] {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let status = try client.request(#"{"op":"status"}"#)
            if status["lag"] as? Int == 0 { return status }
            guard Date() < deadline else { return status }
            usleep(50_000)
        }
    }

    /// A legacy writer, a new-schema writer and coexistd on one file: after the writers stop and the daemon
    /// catches up, both schemas are equal, nothing echoed, every source transaction mirrored at most once.
    @Test func threeProcessesConverge() throws {
        let directory = try TemporaryDirectory()
        let path = try SharedStore.create(in: directory).legacy.path
        let daemon = try DaemonProcess(database: path, directory: directory)
        let client = try SocketClient(path: daemon.socket)
        #expect(try client.request(#"{"op":"ping"}"#)["type"] as? String == "pong")
        let writers = try [("legacy-random", "old", "11"), ("new-random", "new", "12")].map {
            mode,
            author,
            seed -> Process in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: ProductProcess.productsDirectory + "/coexist-test-helper")
            process.arguments = [mode, path, "150", author, seed]
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            return process
        }
        for writer in writers { writer.waitUntilExit() }
        #expect(writers.map(\.terminationStatus) == [0, 0])
        let status = try waitForCatchUp(client)
        #expect(status["lag"] as? Int == 0, "\(status) \(daemon.log.suffix(4_000))")
        #expect(status["parked"] as? Int == 0)
        #expect(daemon.stop() == 0)

        let verify = try ProductProcess.run("coexistctl", ["verify", path])
        #expect(verify.status == 0, "\(verify.stdout)")
        let connection = try Connection(path: path, options: .readOnly)
        let echoes = try connection.scalar(
            """
            SELECT count(*) FROM coexist_mirror m JOIN ATRANSACTION t ON t.Z_PK = m.source_token
            JOIN ATRANSACTIONSTRING s ON s.Z_PK = t.ZAUTHORTS WHERE s.ZNAME = 'coexistd'
            """
        )
        #expect(echoes == .integer(0))
        let sources =
            try connection.scalar(
                """
                SELECT count(*) FROM ATRANSACTION t JOIN ATRANSACTIONSTRING s ON s.Z_PK = t.ZAUTHORTS WHERE s.ZNAME IN ('old', 'new')
                """
            ).integerValue ?? 0
        let mirrors = try connection.scalar("SELECT count(*) FROM coexist_mirror").integerValue ?? 0
        let mirrorTokens =
            try connection.scalar("SELECT count(DISTINCT mirror_token) FROM coexist_mirror").integerValue ?? 0
        let mirrorTransactions =
            try connection.scalar(
                """
                SELECT count(*) FROM ATRANSACTION t JOIN ATRANSACTIONSTRING s ON s.Z_PK = t.ZAUTHORTS WHERE s.ZNAME = 'coexistd'
                """
            ).integerValue ?? 0
        #expect(sources > 100)
        // Refused or no-op saves and deletes of objects the other side never saw mirror nothing, so
        // only the bounds hold: at most one mirror per source transaction, and some work happened.
        #expect(mirrors <= sources && mirrors > 0)
        // One mirror transaction covers the transactions of a pass; each is recorded, none is stray.
        #expect(mirrorTokens <= mirrors && mirrorTokens == mirrorTransactions)
        #expect(try connection.scalar("SELECT count(*) FROM coexist_parked") == .integer(0))
    }

    /// READY=1 only once the socket is bound, WATCHDOG=1 at half the interval, STOPPING=1 on SIGTERM.
    @Test func notifiesTheServiceManager() throws {
        let directory = try TemporaryDirectory()
        let path = try SharedStore.create(in: directory).legacy.path
        let notify = try NotifyListener(path: directory.file("notify"))
        let daemon = try DaemonProcess(
            database: path,
            directory: directory,
            environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "200000"]
        )
        let ready = try #require(notify.wait(for: "READY=1", timeout: 10))
        #expect(FileManager.default.fileExists(atPath: daemon.socket), "the socket is bound before READY=1")
        #expect(ready.contains("STATUS=cursor"))
        let start = Date()
        var watchdogs = 0
        while Date().timeIntervalSince(start) < 1.0 {
            if let message = notify.receive(timeout: 0.2), message.contains("WATCHDOG=1") { watchdogs += 1 }
        }
        #expect(watchdogs >= 6 && watchdogs <= 14, "about one WATCHDOG=1 every 100 ms, got \(watchdogs)")
        daemon.process.terminate()
        #expect(notify.wait(for: "STOPPING=1", timeout: 10) != nil)
        #expect(daemon.stop() == 0)
    }

    /// A service manager that does not read its notifications (their queue full after a dozen watchdog
    /// pings) never stops coexistd serving: `sd_notify(3)` would block its event loop on the next ping.
    @Test func anUnreadNotifySocketNeverStopsServing() throws {
        let directory = try TemporaryDirectory()
        let path = try SharedStore.create(in: directory).legacy.path
        let notify = try NotifyListener(path: directory.file("notify"))  // never read until the end
        let daemon = try DaemonProcess(
            database: path,
            directory: directory,
            environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "20000"]
        )
        defer { daemon.stop() }
        try daemon.waitUntilServing(timeout: 300)
        for _ in 0..<5 {
            usleep(200_000)  // ten more pings each time, into a full queue
            let status = try ProductProcess.run("coexistctl", ["status", "--socket", daemon.socket])
            #expect(status.status == 0, "\(status.stderr)")
        }
        #expect(notify.receive(timeout: 1) != nil, "the notifications that fitted are there")
    }

    /// systemd-socket-activate passes a listening socket as fd 3: coexistd serves on it.
    @Test func socketActivation() throws {
        let activate = "/usr/bin/systemd-socket-activate"
        try #require(
            FileManager.default.isExecutableFile(atPath: activate),
            "systemd-socket-activate is installed by .ci/install-deps"
        )
        let directory = try TemporaryDirectory()
        let path = try SharedStore.create(in: directory).legacy.path
        let socket = directory.file("activated.sock")
        func activated(configuredSocket: String) throws -> Process {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: activate)
            process.arguments = [
                "-l", socket, ProductProcess.productsDirectory + "/coexistd", "--database", path, "--socket",
                configuredSocket,
            ]
            process.environment = SanitizerReport.carrying(["COEXISTD_CONFIG": "", "PATH": "/usr/bin:/bin"])
            process.standardError = FileHandle.nullDevice
            try process.run()
            return process
        }
        let process = try activated(configuredSocket: socket)
        let client = try SocketClient(path: socket)
        #expect(try client.request(#"{"op":"ping"}"#)["type"] as? String == "pong")
        process.terminate()
        process.waitUntilExit()
        // A passed socket that is not the configured one (a template instance's configuration naming another
        // daemon's socket, which coexistctl --config would reach): refused as a configuration error.
        let mismatched = try activated(configuredSocket: directory.file("other.sock"))
        _ = try? SocketClient(path: socket).readLine()
        mismatched.waitUntilExit()
        #expect(mismatched.terminationStatus == 78)
        #expect(!FileManager.default.fileExists(atPath: directory.file("other.sock")))
    }

    @Test func configurationErrorsExit78WithFileAndLine() throws {
        let directory = try TemporaryDirectory()
        let path = try SharedStore.create(in: directory).legacy.path
        func run(_ config: String) throws -> ProductProcess.Result {
            let file = try directory.write("coexistd.conf", Array(config.utf8))
            return try ProductProcess.run("coexistd", ["--config", file, "--check-config"])
        }
        let file = directory.file("coexistd.conf")
        let unknown = try run("database = \(path)\n# comment\nfrobnicate = 1\n")
        #expect(unknown.status == 78)
        #expect(unknown.stderr.contains("\(file):3: unknown key \"frobnicate\""))
        let wrongType = try run("database = \(path)\nbatch-size = lots\n")
        #expect(wrongType.status == 78)
        #expect(wrongType.stderr.contains("\(file):2: batch-size must be an integer"))
        let missing = try run("database = /nonexistent/store.sqlite\n")
        #expect(missing.status == 66)
        #expect(missing.stderr.contains("\(file):1: database /nonexistent/store.sqlite does not exist"))
        // A file where the socket's folder should be; a folder not made yet is only noted (tmpfiles.d makes it).
        let socketDirectory = try run("database = \(path)\nsocket = /etc/passwd/c.sock\n")
        #expect(socketDirectory.status == 78)
        #expect(socketDirectory.stderr.contains("\(file):2: socket directory /etc/passwd is not writable"))
        let notYet = try run("database = \(path)\nsocket = /nonexistent-dir/c.sock\n")
        #expect(notYet.status == 0, "\(notYet.stderr)")
        #expect(notYet.stdout.contains("note: socket directory /nonexistent-dir does not exist yet"))
        let good = try run("database = \(path)\nsocket = \(directory.file("c.sock"))\nconflict-policy = new-wins\n")
        #expect(good.status == 0, "\(good.stderr)")
        let missingFile = try ProductProcess.run("coexistd", ["--config", directory.file("absent.conf")])
        #expect(missingFile.status == 78)
        let badOption = try ProductProcess.run("coexistd", ["--database", path, "--batch-size", "0", "--check-config"])
        #expect(badOption.status == 78)
        #expect(badOption.stderr.contains("command line: --batch-size"))
        #expect(try ProductProcess.run("coexistd", ["--bogus"]).status == 64)
    }
}

@Suite struct DaemonRefusalTests {
    /// A configured model that differs from the store's: coexistd refuses to start, naming both.
    @Test func modelMismatchRefusesToStart() throws {
        let directory = try TemporaryDirectory()
        let path = try SharedStore.create(in: directory).legacy.path
        let v1 = Fixtures.demoModel + "/TaskModel.xcdatamodel"
        let result = try ProductProcess.run(
            "coexistd",
            ["--database", path, "--model", v1, "--socket", directory.file("c.sock")]
        )
        #expect(result.status == 78)
        #expect(
            result.stderr.contains("TaskModel.xcdatamodel/contents (version 1.0.0) does not match the store's model")
        )
        #expect(result.stderr.contains("version 2.0.0"))
    }

    /// A file that is not a Core Data store: a clear error, not a crash.
    @Test func foreignDatabaseIsRefused() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("notes.sqlite", Array(String(repeating: "text ", count: 100).utf8))
        let result = try ProductProcess.run(
            "coexistd",
            ["--database", path, "--socket", directory.file("c.sock"), "--once"]
        )
        #expect(result.status == 65)
        #expect(result.stderr.contains("notes.sqlite"))
    }
}
